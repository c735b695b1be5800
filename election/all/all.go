// Package all registers every election algorithm; import it for its side
// effect where the registry must be complete (the CLI, the node, the tests
// that run every algorithm).
package all

import (
	// Each algorithm package registers itself in init. Add new ones here.
	_ "github.com/ringleader-dev/ringleader/election/bully"
	_ "github.com/ringleader-dev/ringleader/election/changroberts"
	_ "github.com/ringleader-dev/ringleader/election/hs"
	_ "github.com/ringleader-dev/ringleader/election/peterson"
	_ "github.com/ringleader-dev/ringleader/election/raft"
	_ "github.com/ringleader-dev/ringleader/election/ring"
	_ "github.com/ringleader-dev/ringleader/election/variabletime"
)
