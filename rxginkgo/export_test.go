package rxginkgo

// AssertEntry exposes the body of rxginkgo's own tables to the tests.
var AssertEntry = assertEntry
