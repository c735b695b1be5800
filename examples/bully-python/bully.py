#!/usr/bin/env python3
"""Bully election (Garcia-Molina, 1982) as a ringleader program.

Standard library only. It speaks the protocol of docs/protocol.md on its
stdin and stdout: one event line in, one answer line out. It owns no clock
and no randomness of its own: time arrives in every event, timers are
effects the runtime carries out, and its one random draw (the jitter of a
retry) comes from the seed in `init`. Its log goes to stderr.

Plain Bully only (quorum "none"): a node that starts, or suspects its
leader, sends ELECTION to every higher ID; a live higher node answers OK
and runs its own election; a node that hears no OK within the answer
timeout leads and sends COORDINATOR to every lower ID. The leader's
HEARTBEAT is the failure detector.

    ringleader sim explore --program "python3 examples/bully-python/bully.py" --n 5
"""

import json
import random
import sys

CLAIMS = ["agreement", "bully-max", "liveness"]
ELECTION_TYPES = ["ELECTION", "OK"]
ANNOUNCE_TYPES = ["COORDINATOR"]

IDLE, FOLLOWING, PROBING, AWAITING, LEADING = range(5)


class Bully:
    def __init__(self, init):
        self.id = init["id"]
        self.members = sorted(init["members"])
        self.higher = [m for m in self.members if m > self.id]
        self.lower = [m for m in self.members if m < self.id]
        t = init["timing"]
        self.heartbeat, self.suspicion, self.answer = t["heartbeat_ns"], t["suspicion_ns"], t["answer_ns"]
        self.fault_free = init.get("fault_free", False)
        seed = init["seed"]
        self.rand = random.Random(seed[0] * (1 << 64) + seed[1])
        self.epoch = init["durable"]["epoch"]
        self.phase = IDLE
        self.leader = 0
        self.round = 0
        self.down = set()  # peers hinted gone, until heard from
        self.suspected = 0  # the leader followed when a lower probe drew this node in
        self.view = None
        self.out = []

    # --- effects ---------------------------------------------------------

    def send(self, to, typ, **fields):
        msg = {"type": typ, "from": self.id, "to": to, "epoch": self.epoch}
        msg.update(fields)
        self.out.append({"kind": "send", "msg": msg})

    def set_timer(self, name, after):
        self.out.append({"kind": "set-timer", "timer": name, "after_ns": after})

    def cancel_timer(self, name):
        self.out.append({"kind": "cancel-timer", "timer": name})

    def set_epoch(self, e):
        if e > self.epoch:
            self.epoch = e
            self.out.append({"kind": "persist", "durable": {"epoch": e, "voted_epoch": 0, "voted_for": 0}})

    def publish(self):
        leader, role = 0, "undecided"
        if self.phase == FOLLOWING:
            leader, role = self.leader, "follower"
        elif self.phase in (PROBING, AWAITING):
            role = "candidate"
        elif self.phase == LEADING:
            leader, role = self.id, "leader"
        view = {"leader": leader, "epoch": self.epoch, "role": role}
        if view != self.view:
            self.view = view
            self.out.append({"kind": "view", "view": view})

    # --- events ----------------------------------------------------------

    def step(self, event):
        self.out = []
        kind = event["kind"]
        if kind == "start":
            self.campaign()
        elif kind == "receive":
            self.receive(event["msg"])
        elif kind == "timer":
            self.timer(event["timer"])
        elif kind == "peer-down":
            self.peer_down(event["peer"])
        self.publish()
        return self.out

    def timer(self, name):
        if name == "answer" and self.phase == PROBING:
            self.lead()
        elif name == "coordinator" and self.phase == AWAITING:
            self.campaign()
        elif name == "heartbeat" and self.phase == LEADING:
            self.out.append({"kind": "broadcast", "msg": {"type": "HEARTBEAT", "from": self.id, "to": 0, "epoch": self.epoch}})
            self.set_timer("heartbeat", self.heartbeat)
        elif name == "suspect":
            if self.phase == FOLLOWING:
                self.down.add(self.leader)
                self.campaign()
            elif self.phase == PROBING and self.suspected:
                self.down.add(self.suspected)
                self.suspected = 0
                if self.higher_all_down():
                    self.cancel_timer("answer")
                    self.lead()

    def peer_down(self, p):
        self.down.add(p)
        if self.phase == PROBING and self.higher_all_down():
            self.cancel_timer("answer")
            self.lead()
        elif self.phase == FOLLOWING and p == self.leader:
            self.campaign()

    def higher_all_down(self):
        return bool(self.down) and all(h in self.down for h in self.higher)

    def receive(self, msg):
        s = msg["from"]
        if s == self.id or s not in self.members:
            return
        self.down.discard(s)
        typ, e = msg["type"], msg["epoch"]
        if typ == "ELECTION" and s < self.id:
            self.probed(s, e, msg.get("seq", 0))
        elif typ == "OK" and s > self.id:
            self.set_epoch(e)
            if self.phase == PROBING and msg.get("seq", 0) == self.round:
                self.await_coordinator()
        elif typ in ("COORDINATOR", "HEARTBEAT"):
            self.claim(s, e)

    # --- the algorithm ---------------------------------------------------

    def campaign(self):
        if self.phase == LEADING:
            self.cancel_timer("heartbeat")
            self.phase = IDLE
            self.publish()
        self.cancel_timer("coordinator")
        was_following, old_leader = self.phase == FOLLOWING, self.leader
        self.round += 1
        self.phase, self.leader = PROBING, 0
        if was_following and old_leader not in self.down:
            self.suspected = old_leader  # its suspicion timer still runs
        else:
            self.cancel_timer("suspect")
            self.suspected = 0
        if not self.higher:
            self.lead()
            return
        for h in self.higher:
            self.send(h, "ELECTION", seq=self.round, candidate=self.id)
        self.set_timer("answer", self.answer)
        if self.higher_all_down():
            self.cancel_timer("answer")
            self.lead()

    def await_coordinator(self):
        self.phase = AWAITING
        self.cancel_timer("answer")
        self.set_timer("coordinator", 2 * self.answer + self.rand.randint(0, self.answer // 2))

    def lead(self):
        self.cancel_timer("answer")
        self.cancel_timer("suspect")
        self.set_epoch(self.epoch + 1)
        self.phase = LEADING
        self.announce()
        if not self.fault_free:
            self.set_timer("heartbeat", self.heartbeat)

    def announce(self):
        for low in self.lower:
            self.send(low, "COORDINATOR")

    def probed(self, s, e, seq):
        behind = e < self.epoch
        if self.phase == LEADING:
            if e > self.epoch:
                self.set_epoch(e + 1)
                self.announce()
            else:
                self.send(s, "COORDINATOR")
            return
        self.set_epoch(e)
        self.send(s, "OK", seq=seq)
        if self.phase in (PROBING, AWAITING) or (self.phase == FOLLOWING and behind):
            return
        self.campaign()

    def claim(self, s, e):
        if e < self.epoch:
            return  # stale
        if s < self.id:
            # A lower node leads; this one is alive: bully it.
            self.set_epoch(e)
            if self.phase == LEADING:
                self.set_epoch(e + 1)
                self.announce()
            elif self.phase not in (PROBING, AWAITING):
                self.campaign()
            return
        if e == self.epoch and self.phase == FOLLOWING and self.leader > s:
            return
        if self.phase == LEADING:
            self.cancel_timer("heartbeat")
        self.cancel_timer("answer")
        self.cancel_timer("coordinator")
        self.set_epoch(e)
        self.phase, self.leader = FOLLOWING, s
        if self.fault_free:
            self.cancel_timer("suspect")
        else:
            self.set_timer("suspect", self.suspicion)


def main():
    node = None
    for line in sys.stdin:
        req = json.loads(line)
        event = req["event"]
        answer = {"v": 1, "seq": req["seq"]}
        if event["kind"] == "start":
            init = req["init"]
            if init["quorum"] != "none":
                print("bully.py: quorum %r: this example runs plain Bully only (quorum none)" % init["quorum"], file=sys.stderr)
                sys.exit(2)
            node = Bully(init)  # a start resets everything
            answer.update(claims=CLAIMS, election_types=ELECTION_TYPES, announce_types=ANNOUNCE_TYPES)
        answer["effects"] = node.step(event)
        sys.stdout.write(json.dumps(answer, separators=(",", ":")) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
