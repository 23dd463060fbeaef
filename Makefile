# p2pbench: build, test, and the bundle for the GPU machine.
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
export CGO_ENABLED := 0

.PHONY: build test vet fmt-check deadcode gpu clean fuzz dist test-arm64

## build: the p2pbench binary (no cgo, no CUDA toolkit needed)
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o p2pbench ./cmd/p2pbench

## test: vet, gofmt check, every unit test (fake driver and gcc-built fake libcuda), and the
## binding's tests for arm64 under qemu-user (skipped without the cross tools, installed under CI);
## deadcode: no product function that only tests use
test: vet fmt-check deadcode
	$(GO) test -count=1 ./...
	scripts/test-arm64.sh

vet:
	$(GO) vet ./...
	$(GO) vet -tags gpu ./...

deadcode:
	scripts/deadcode.sh

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

# The packages with -tags gpu tests (the bundle must stay under the device machine's 64 MiB).
GPU_TEST_PKGS := ./cuda ./nvml ./measure ./bench ./ipc

## gpu: the bundle for the GPU machine in .gpu/: binary, GPU-tagged test binaries, scripts
gpu:
	rm -rf .gpu && mkdir -p .gpu
	$(GO) build -ldflags "$(LDFLAGS) -s -w" -o .gpu/p2pbench ./cmd/p2pbench
	$(GO) test -c -tags gpu -ldflags "-s -w" -o .gpu/ $(GPU_TEST_PKGS)
	cp kernels/*.ptx kernels/check_ptx.sh .gpu/ 2>/dev/null || true
	cp scripts/gpu-run.sh scripts/gpu-onedev.sh .gpu/ 2>/dev/null || true

## dist: release binaries for linux/amd64 and linux/arm64 in dist/ (no cgo; they need only the C library,
## whose loader opens libcuda), version stamped, the man
## page and the bash and fish completions, with SHA-256 sums
DIST_ARCHS ?= amd64 arm64
dist:
	rm -rf dist && mkdir -p dist
	for a in $(DIST_ARCHS); do \
		GOOS=linux GOARCH=$$a $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o dist/p2pbench-$(VERSION)-linux-$$a ./cmd/p2pbench || exit 1; \
	done
	$(GO) run ./cmd/p2pbench man > dist/p2pbench.1
	$(GO) run ./cmd/p2pbench completion bash > dist/p2pbench.bash
	$(GO) run ./cmd/p2pbench completion fish > dist/p2pbench.fish
	cd dist && sha256sum p2pbench* > SHA256SUMS && cat SHA256SUMS

## test-arm64: the binding's tests (fake libcuda and libnvidia-ml through the real loader) built for
## linux/arm64 and run under qemu-user, so purego's calling convention is tested on both architectures
test-arm64:
	scripts/test-arm64.sh

## fuzz: FUZZTIME (default a minute) of fuzzing each parser of outside input: every func FuzzX of
## the module's tests (results files, plain and gzip-compressed, specs, sizes, device lists,
## imports); CI runs each for a few seconds (make fuzz FUZZTIME=4s)
FUZZTIME ?= 60s
fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) scripts/fuzz.sh

clean:
	rm -rf p2pbench .gpu dist
