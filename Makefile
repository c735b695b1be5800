# ringleader — make targets. Every target works with Compose v2 (`docker
# compose`) or Compose v1 (`docker-compose`), whichever this machine has.

GO        ?= go
BIN       := bin/ringleader
IMAGE     ?= ringleader-node:dev
COMPOSE   := $(shell if docker compose version >/dev/null 2>&1; then echo "docker compose"; elif command -v docker-compose >/dev/null 2>&1; then echo docker-compose; fi)
SCENARIOS ?= scenarios/*.yaml
# The shipped examples' scenarios (examples/*/), run by chaos-test and
# sim-test beside SCENARIOS once `make examples` has built their programs.
EXAMPLE_SCENARIOS ?= examples/*/*.yaml
# How many scenario runs chaos-test and sim-test run at once; 0: from the
# machine (ringleader help run, --parallel)
PARALLEL  ?= 0
# chaos-test's results as JUnit XML, for CI (one testsuite per scenario run)
JUNIT     ?= store/junit.xml

# Nothing may be pulled on a machine with no registry: testcontainers'
# reaper stays off and the project cleans up by label instead.
export TESTCONTAINERS_RYUK_DISABLED := true

.PHONY: all build examples images up-vars up down logs tap chaos-test sim-test test test-nodocker rig-up rig-down vet fmt fuzz bench bench-containers bench-systems clean help

all: build

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build the static ringleader binary into bin/
	CGO_ENABLED=0 $(GO) build -buildvcs=auto -trimpath -ldflags='-s -w' -o $(BIN) ./cmd/ringleader

# What the shipped example scenarios run: examples/bully-go built static
# where its scenario names it, and the image with Python the Python
# example's nodes run in (built once, from Debian's packages).
examples: ## build what the example scenarios run: bin/bully-go, and the ringleader-python:bookworm image if missing
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/bully-go ./examples/bully-go
	sh examples/bully-python/image.sh --if-missing

images: ## build the node image FROM scratch (nothing is pulled)
	CGO_ENABLED=0 $(GO) build -tags nodeimage -trimpath -ldflags='-s -w' -o bin/node/ringleader ./cmd/ringleader
	docker build --label org.ringleader.project=ringleader -t $(IMAGE) -f docker/Dockerfile .
	@# the image the tag named before is now an untagged leftover of ours
	@docker image prune -f --filter label=org.ringleader.project=ringleader >/dev/null

# The compose cluster's secret (docs/trust.md): made fresh when the cluster
# starts, kept while any of its containers exists so that `make up` again
# (say, to start a killed node) keeps the cluster whole, and removed by
# `make down`. Only its owner can read the file.
SECRET_FILE := .ringleader/compose.secret

# PROGRAM="COMMAND ARGS" makes every compose node host that program
# (docs/protocol.md) instead of an algorithm: `ringleader image` builds the
# node image holding it, with the code the docker backend uses for a
# scenario's cluster.program, labelled for `make down`, and prints the
# image's tag and the command line the nodes run, which docker-compose.yml
# reads (NODE_IMAGE, RINGLEADER_PROGRAM). A static executable needs nothing
# else; an interpreted program names the image holding its runtime in
# PROGRAM_IMAGE (examples/bully-python/image.sh builds
# ringleader-python:bookworm). The program is checked before anything is built.
PROGRAM       ?=
PROGRAM_IMAGE ?=
# SYSTEM=etcd (or nats-jetstream, or a system file) makes `make up` start
# that real server's cluster instead (docs/systems.md): `ringleader up`
# builds what changed, starts NODES members (default 5) labelled compose,
# with OPTIONS="NAME=VALUE,..." passed to the server (the others stay its
# defaults), and returns once they agree on a leader. `ringleader fault`,
# `run --attach` and `make down` work on it as on the compose cluster.
SYSTEM        ?=
NODES         ?= 5

# up's variables are checked first, before anything is built.
up-vars:
	@test -n "$(COMPOSE)" || { echo "neither 'docker compose' nor 'docker-compose' found" >&2; exit 1; }
	@if [ -n "$(PROGRAM)" ] && [ -n "$(ALGORITHM)$(OPTIONS)" ]; then \
		echo "PROGRAM= hosts a program instead of an algorithm, and a program takes no options: drop ALGORITHM= and OPTIONS=" >&2; exit 2; \
	fi
	@if [ -z "$(PROGRAM)" ] && [ -n "$(PROGRAM_IMAGE)" ]; then echo "PROGRAM_IMAGE= goes with PROGRAM=\"COMMAND ARGS\"" >&2; exit 2; fi
	@if [ -n "$(SYSTEM)" ] && [ -n "$(PROGRAM)$(ALGORITHM)$(QUORUM)" ]; then echo "SYSTEM= starts a real server's cluster: drop PROGRAM=, ALGORITHM= and QUORUM=" >&2; exit 2; fi

up: up-vars $(if $(PROGRAM)$(SYSTEM),build,images) ## start the 5-node compose cluster with a fresh secret (ALGORITHM=, QUORUM=, OPTIONS="k=v,...", LOG_LEVEL= to switch; PROGRAM="cmd args" [PROGRAM_IMAGE=image] to host a program; SYSTEM=etcd [NODES=] for a real server)
ifneq ($(SYSTEM),)
	./$(BIN) up --system "$(SYSTEM)" --nodes $(NODES) --options "$(OPTIONS)" --image $(IMAGE)
else
	@mkdir -p $(dir $(SECRET_FILE))
	@set -e; node_image=$(IMAGE); program=; \
	if [ -n "$(PROGRAM)" ]; then \
		out=$$(./$(BIN) image --image $(IMAGE) --run compose --program "$(PROGRAM)" --program-image "$(PROGRAM_IMAGE)"); \
		eval "$$out"; node_image=$$NODE_IMAGE; program=$$RINGLEADER_PROGRAM; \
		echo "nodes host $$program, in $$node_image"; \
	fi; \
	if [ ! -s $(SECRET_FILE) ] || [ -z "$$(docker ps -aq --filter label=org.ringleader.run=compose)" ]; then \
		umask 077; head -c 24 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n' > $(SECRET_FILE); \
		echo "new cluster secret in $(SECRET_FILE)"; \
	fi; \
	echo "$(COMPOSE) up -d"; \
	NODE_IMAGE="$$node_image" RINGLEADER_PROGRAM="$$program" RINGLEADER_SECRET="$$(cat $(SECRET_FILE))" $(COMPOSE) up -d
endif

down: ## stop the compose cluster and remove its containers, network, volumes, secret and program image
	@test -n "$(COMPOSE)" || { echo "neither 'docker compose' nor 'docker-compose' found" >&2; exit 1; }
	@# ringleader fault's delay helpers carry the cluster's label, not compose's
	@ids=$$(docker ps -aq --filter label=org.ringleader.run=compose --filter label=org.ringleader.role=netfilter); \
		if [ -n "$$ids" ]; then docker rm -f $$ids >/dev/null; fi
	$(COMPOSE) down -v --remove-orphans
	@# what is left labelled compose is ringleader's, not compose's: a real
	@# server's cluster (SYSTEM= make up) or `ringleader up --algorithm`'s
	@# (across the engines RINGLEADER_ENGINES names, which clean reads too)
	@if [ -n "$$(docker ps -aq --filter label=org.ringleader.run=compose --filter label=org.ringleader.role=node)" ]; then \
		./$(BIN) clean --run compose || exit 1; fi
	@# the images PROGRAM= made (ringleader image --run compose), once no container uses them
	@tags=$$(docker images --filter label=org.ringleader.project=ringleader --filter label=org.ringleader.run=compose --format '{{.Repository}}:{{.Tag}}'); \
		if [ -n "$$tags" ]; then echo "removing $$tags"; docker image rm $$tags >/dev/null; fi
	rm -f $(SECRET_FILE)

tap: ## print every message on the compose cluster's subjects (read-only, with the cluster's secret)
	@test -s $(SECRET_FILE) || { echo "no $(SECRET_FILE): start the cluster with make up" >&2; exit 1; }
	RINGLEADER_SECRET="$$(cat $(SECRET_FILE))" docker run --rm -i --read-only --cap-drop ALL \
		--security-opt no-new-privileges:true --network ringleader-compose -e RINGLEADER_SECRET \
		--label org.ringleader.project=ringleader --label org.ringleader.run=compose \
		--entrypoint /ringleader $(IMAGE) tap --server nats://node1:4222 --cluster compose

# --no-color: Compose v1 colours each line's prefix even into a pipe.
logs: ## follow the compose cluster's logs (info: views, drops, a summary per node every 10 s)
	$(COMPOSE) logs -f --no-color

chaos-test: build examples ## run every scenario, the examples' too, in real containers; JUnit XML in $(JUNIT)
	./$(BIN) run --backend docker --parallel $(PARALLEL) --junit $(JUNIT) $(SCENARIOS) $(EXAMPLE_SCENARIOS)

sim-test: build examples ## run every scenario, the examples' too, in the simulator
	./$(BIN) run --backend sim --parallel $(PARALLEL) $(SCENARIOS) $(EXAMPLE_SCENARIOS)

vet: ## go vet, gofmt, and the node image's build (-tags nodeimage) compiling
	$(GO) vet ./...
	CGO_ENABLED=0 $(GO) build -tags nodeimage -o /dev/null ./cmd/ringleader
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# How many test binaries (go test -p) and how many parallel tests of one
# package (-parallel) go at once, and which packages go first. Tests of
# one package go four at once, more than the cores, because container
# tests mostly wait for containers. Test binaries go four at once, and the
# packages of TEST_FIRST, which hold nearly all the container work, start
# first: go test starts packages in the order it is given them, and with
# ./... alone the shipped scenarios (harness) started only once the
# packages before it in the alphabet were done, then ran alone at the
# end. The load four binaries put on two cores is held in check by
# internal/dockertest, not by -p: how many clusters the container tests
# start at once across all packages is its slot count
# (RINGLEADER_TEST_CLUSTERS, default three per two cores), and a test that
# measures time runs alone (dockertest.Alone), with no other container
# test and no CPU-bound test (dockertest.CPUBound) of any package beside
# it, whatever these say.
TEST_PACKAGES ?= 4
TEST_PARALLEL ?= 4
TEST_FIRST    ?= ./harness ./cmd/ringleader ./docker ./internal/rig

test: vet ## the whole test suite, race detector on, container chaos tests side by side (TEST_PACKAGES=, TEST_PARALLEL=)
	$(GO) test -race -count=1 -p $(TEST_PACKAGES) -parallel $(TEST_PARALLEL) -timeout 30m $(TEST_FIRST) ./...

# RINGLEADER_NO_DOCKER=1 is internal/dockertest's switch: every container
# test and TestMain skips without dialing an engine, CI=true or not.
test-nodocker: vet ## the test suite without Docker: never dials an engine, container tests skip (-race)
	RINGLEADER_NO_DOCKER=1 $(GO) test -race -count=1 -timeout 30m ./...

# A second Docker engine on this machine, in its own network namespace,
# joined with this one in a swarm (docs/engines.md; root only). rig-up
# copies IMAGE into it and prints the engines for --engines; rig-down
# removes exactly what rig-up made.
rig-up: build images ## start a second Docker engine in a network namespace, in a swarm with this one (root), with IMAGE copied in
	./$(BIN) rig up --image $(IMAGE)

rig-down: ## remove what rig-up made: both engines out of the swarm, the second daemon, its namespace and data
	@test -x $(BIN) || $(MAKE) build
	./$(BIN) rig down

fuzz: ## fuzz the wire decoder for 60 s
	$(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime 60s ./wire/

bench: build ## every figure of docs/performance.md: Go benchmarks, simulator scale, explorer speed, then (bench-containers) failover, return, 32 and 64 containers
	$(GO) test -run '^$$' -bench . -benchmem ./...
	@echo "== simulator: fault-free elections at scale"
	./$(BIN) sim complexity --algorithm hs --n 100000 --arrangement random
	./$(BIN) sim complexity --algorithm changroberts --n 10000 --arrangement worst
	./$(BIN) sim complexity --algorithm peterson --n 1000000 --arrangement random
	@echo "== explorer: schedules per second and × real time"
	./$(BIN) sim explore --algorithm bully --n 5 --quorum majority --schedules 10000 --seed 1 | head -2
	./$(BIN) sim explore --algorithm raft --n 5 --schedules 2000 --seed 1 | head -2
	$(MAKE) bench-containers

# One run at a time: these are figures, and runs at once share the cores
# (docs/performance.md, "Runs at once").
bench-containers: build images ## container figures: silent failure and resume (20 runs), heal (10), 32 nodes (10), 64 nodes (3), one run at a time; repeat summaries only
	./$(BIN) run --backend docker --build=false --parallel 1 --repeat 20 scenarios/leader-paused.yaml | sed -n '/^leader-paused:/,$$p'
	./$(BIN) run --backend docker --build=false --parallel 1 --repeat 10 scenarios/leader-returns-quorum.yaml scenarios/split-brain-no-quorum.yaml | sed -n '/^leader-returns-quorum:/,$$p'
	./$(BIN) run --backend docker --build=false --parallel 1 --repeat 10 scenarios/scale/bully-32.yaml | sed -n '/^bully-scale-32:/,$$p'
	@# 64 nodes are more than two cores are admitted to hold (docker.NodesPerCore,
	@# 16 per core): measured with the override, to see whether this machine holds them.
	RINGLEADER_NODES_PER_CORE=32 ./$(BIN) run --backend docker --build=false --parallel 1 --repeat 3 scenarios/scale/bully-64.yaml | sed -n '/^bully-scale-64:/,$$p'

# Each benchmark starts its own three-member cluster (the server's image
# built first when its source changed): failovers 5 times, the probes' CPU
# over three 15 s windows.
bench-systems: ## real servers: etcd and JetStream failover after a leader kill, and what probing costs etcd's members (docs/systems.md)
	$(GO) test -run '^$$' -bench 'EtcdFailoverAfterLeaderKill|JetStreamMetaFailover' -benchtime 5x -timeout 30m ./docker/
	$(GO) test -run '^$$' -bench EtcdProbeCPU -benchtime 1x -timeout 10m ./docker/

clean: ## remove everything any ringleader run left behind (containers, networks, images) and bin/
	-@test -x $(BIN) || $(MAKE) build
	-./$(BIN) clean
	rm -rf bin
