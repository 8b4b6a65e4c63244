package isolate

// PoolWorkers returns how many live workers pl has.
func PoolWorkers(pl *Pool) int {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return len(pl.workers)
}

// SetAfterLookup makes Prepare with pl call f after it found the program
// in the worker and before it returns the handle.
func SetAfterLookup(pl *Pool, f func()) { pl.afterLookup = f }
