package facts

import (
	"github.com/rtload/rtload/compare"
)

// Compare builds the comparison of runs a person reads (from
// compare/load's Runs, or built in code with Wakeups optional):
// CompareWith with no options. It fails as compare.Model does.
func Compare(runs []compare.Run) (*compare.Result, error) {
	return CompareWith(runs, compare.Options{})
}

// CompareWith is Compare with options: the model (compare.Model), then
// the differences between the runs and their trial marks, the machine and
// kernel metadata and the kernel profiles' differences.
func CompareWith(runs []compare.Run, opt compare.Options) (*compare.Result, error) {
	res, err := compare.Model(runs, opt)
	if err != nil {
		return nil, err
	}
	res.Warnings, res.Info = Differences(runs)
	res.Warnings = append(res.Warnings, compare.TrialMarks(runs)...)
	res.Metadata = Metadata(runs)
	res.Profiles = profileDiffs(runs)
	return res, nil
}
