// Package auto is the rule a rounds: auto run stops on (rtload run
// --precision, --max-rounds, --max-time): after each round, Round reads
// the run's headline metric as a check's look does (Headline, through
// compare.Headlines: the headline metrics only, no facts, no view), asks
// Stop whether the 95% CI of its difference is as narrow as asked or a
// limit is reached, and records the decision in the summary
// (results.AutoRounds). The interval is package stats'.
package auto
