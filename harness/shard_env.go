package harness

import (
	"fmt"
	"os"
	"strconv"
)

// ShardFromEnv reads the shard a CI system assigned to this job from its
// own variables, for `rxeq run` without --shard:
//
//   - Bazel: TEST_TOTAL_SHARDS and TEST_SHARD_INDEX (0-based). Bazel also
//     asks a test that supports sharding to touch TEST_SHARD_STATUS_FILE;
//     ShardFromEnv does, creating it empty if it does not exist.
//   - GitLab CI (parallel:): CI_NODE_TOTAL and CI_NODE_INDEX (1-based).
//
// getenv is os.Getenv in production. It returns the zero Shard (every
// case) when neither pair is set or the total is 1, the source
// ("bazel", "gitlab") of the shard it found, and an error wrapping
// ErrOptions when a pair is malformed.
func ShardFromEnv(getenv func(string) string) (Shard, string, error) {
	if total := getenv("TEST_TOTAL_SHARDS"); total != "" {
		sh, err := shardVars("TEST_SHARD_INDEX", getenv("TEST_SHARD_INDEX"), "TEST_TOTAL_SHARDS", total, 0)
		if err != nil {
			return Shard{}, "", err
		}
		if f := getenv("TEST_SHARD_STATUS_FILE"); f != "" {
			fh, err := os.OpenFile(f, os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return Shard{}, "", fmt.Errorf("%w: TEST_SHARD_STATUS_FILE: %v", ErrOptions, err)
			}
			fh.Close()
		}
		return sh, "bazel", nil
	}
	if total := getenv("CI_NODE_TOTAL"); total != "" {
		sh, err := shardVars("CI_NODE_INDEX", getenv("CI_NODE_INDEX"), "CI_NODE_TOTAL", total, 1)
		return sh, "gitlab", err
	}
	return Shard{}, "", nil
}

// shardVars reads an index (counted from base) and a total.
func shardVars(indexVar, index, totalVar, total string, base int) (Shard, error) {
	n, err := strconv.Atoi(total)
	if err != nil || n < 1 {
		return Shard{}, fmt.Errorf("%w: %s=%q: want a positive number", ErrOptions, totalVar, total)
	}
	i, err := strconv.Atoi(index)
	if err != nil || i < base || i >= n+base {
		return Shard{}, fmt.Errorf("%w: %s=%q: want %d to %d (%s=%d)", ErrOptions, indexVar, index, base, n-1+base, totalVar, n)
	}
	if n == 1 {
		return Shard{}, nil
	}
	return Shard{Index: i - base + 1, Total: n}, nil
}
