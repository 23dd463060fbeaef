# p2pbench: build, test, and the bundle for the GPU machine.
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
export CGO_ENABLED := 0

.PHONY: build test vet fmt-check gpu clean fuzz

## build: the p2pbench binary (no cgo, no CUDA toolkit needed)
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o p2pbench ./cmd/p2pbench

## test: vet, gofmt check and every unit test (fake driver and gcc-built fake libcuda)
test: vet fmt-check
	$(GO) test -count=1 ./...

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

## gpu: the bundle for the GPU machine in .gpu/: binary, GPU-tagged test binaries, scripts
gpu:
	rm -rf .gpu && mkdir -p .gpu
	$(GO) build -ldflags "$(LDFLAGS)" -o .gpu/p2pbench ./cmd/p2pbench
	$(GO) test -c -tags gpu -o .gpu/ ./...
	cp kernels/*.ptx kernels/check_ptx.sh .gpu/ 2>/dev/null || true
	cp scripts/gpu-run.sh .gpu/ 2>/dev/null || true

## fuzz: a minute of fuzzing the results reader
fuzz:
	$(GO) test -run=^$$ -fuzz=FuzzDecode -fuzztime=60s ./results/

clean:
	rm -rf p2pbench .gpu
