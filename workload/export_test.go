package workload

// ParseLeftoverName exposes parseLeftoverName to the tests.
var ParseLeftoverName = parseLeftoverName
