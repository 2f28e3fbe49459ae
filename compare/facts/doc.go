// Package facts compares what rtload runs are beside their numbers, and
// fills it into compare's model: Differences (the facts of machine,
// kernel, clock and scenario that differ between the runs, as warnings
// and information), Metadata (mmtests-style: one row per fact that
// differs, one column per run), the kernel profiles' differences
// (Result.Profiles), and Compare and CompareWith, the comparison a person
// reads: compare.Model with these and the runs' trial marks
// (compare.TrialMarks) filled in.
//
// A gate's look never comes here: it reads compare.Headlines, which
// touches no metadata, difference or profile. Package compare never
// imports facts; compare/view renders what it fills in.
package facts
