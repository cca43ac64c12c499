# The README's commands. Every target sets up what it needs first, so a fresh clone just works.
.PHONY: run test lint bench bundle bootstrap test-deps mutate

bootstrap:
	@scripts/bootstrap.sh

test-deps:
	@scripts/test-deps.sh

run: bootstrap
	.venv/bin/helm $(ARGS)

test: bootstrap test-deps
	@scripts/check.sh $(ARGS)

lint: bootstrap
	@scripts/lint.sh

# Every mutant of every boundary module against its tests, with a score per module (tests/mutation/).
mutate: bootstrap test-deps
	@scripts/mutate.sh $(ARGS)

bench: bootstrap test-deps
	@scripts/bench.sh $(ARGS)

# The Linux bundle in dist/ (packaging/README.md); packaging/smoke-test.sh runs it headless.
bundle: bootstrap
	@packaging/build-linux.sh
