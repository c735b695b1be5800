package ringnet

import "github.com/ringleader-dev/ringleader/election"

// Claims is what every ring election here guarantees without a quorum: once
// stable, the nodes agree, the highest live ID leads (a lower leader's
// heartbeat makes a higher node call an election), and a leader follows
// every fault. They make no epoch-safety claim: a partitioned ring elects in
// each part, and both parts may pick the same next epoch.
func Claims(election.QuorumMode) []election.Property {
	return []election.Property{election.Agreement, election.HighestWins, election.Liveness}
}
