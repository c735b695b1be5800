# ringleader — make targets. Every target works with Compose v2 (`docker
# compose`) or Compose v1 (`docker-compose`), whichever this machine has.

GO        ?= go
BIN       := bin/ringleader
IMAGE     ?= ringleader-node:dev
COMPOSE   := $(shell if docker compose version >/dev/null 2>&1; then echo "docker compose"; elif command -v docker-compose >/dev/null 2>&1; then echo docker-compose; fi)
SCENARIOS ?= scenarios/*.yaml

# Nothing may be pulled on a machine with no registry: testcontainers'
# reaper stays off and the project cleans up by label instead.
export TESTCONTAINERS_RYUK_DISABLED := true

.PHONY: all build images up down logs chaos-test sim-test test vet fmt fuzz bench clean help

all: build

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build the static ringleader binary into bin/
	CGO_ENABLED=0 $(GO) build -buildvcs=auto -trimpath -ldflags='-s -w' -o $(BIN) ./cmd/ringleader

images: ## build the node image FROM scratch (nothing is pulled)
	CGO_ENABLED=0 $(GO) build -tags nodeimage -trimpath -ldflags='-s -w' -o bin/node/ringleader ./cmd/ringleader
	docker build --label org.ringleader.project=ringleader -t $(IMAGE) -f docker/Dockerfile .
	@# the image the tag named before is now an untagged leftover of ours
	@docker image prune -f --filter label=org.ringleader.project=ringleader >/dev/null

up: images ## start the 5-node compose cluster (ALGORITHM=, QUORUM= to switch)
	@test -n "$(COMPOSE)" || { echo "neither 'docker compose' nor 'docker-compose' found" >&2; exit 1; }
	$(COMPOSE) up -d

down: ## stop the compose cluster and remove its containers, network and volumes
	@test -n "$(COMPOSE)" || { echo "neither 'docker compose' nor 'docker-compose' found" >&2; exit 1; }
	$(COMPOSE) down -v --remove-orphans

logs: ## follow the compose cluster's logs
	$(COMPOSE) logs -f

chaos-test: build ## run every scenario in real containers
	./$(BIN) run --backend docker $(SCENARIOS)

sim-test: build ## run every scenario in the simulator
	./$(BIN) run --backend sim $(SCENARIOS)

vet: ## go vet and gofmt
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

test: vet ## the whole test suite, race detector on, container chaos tests included
	$(GO) test -race -count=1 -timeout 30m ./...

fuzz: ## fuzz the wire decoder for 60 s
	$(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime 60s ./wire/

bench: build ## benchmarks (election speed, explorer throughput), then the explorer's schedules/s and × real time
	$(GO) test -run '^$$' -bench . -benchmem ./...
	./$(BIN) sim explore --algorithm bully --n 5 --quorum majority --schedules 10000 --seed 1 | head -2

clean: ## remove everything any ringleader run left behind (containers, networks, images) and bin/
	-@test -x $(BIN) || $(MAKE) build
	-./$(BIN) clean
	rm -rf bin
