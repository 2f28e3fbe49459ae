package facts

import (
	"fmt"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/explain"
	"github.com/rtload/rtload/profile"
)

// profileDiffs compares each variant's profile in every run with the
// first run's that has one; nothing when fewer than two runs profiled a
// variant.
func profileDiffs(runs []compare.Run) []compare.ProfileDiff {
	var out []compare.ProfileDiff
	var order []string
	base := map[string]int{} // variant → first run with a readable profile of it
	for i, r := range runs {
		for _, v := range r.Profiles {
			if v.Profile == nil {
				continue
			}
			if _, ok := base[v.VariantProfile.Variant]; !ok {
				base[v.VariantProfile.Variant] = i
				order = append(order, v.VariantProfile.Variant)
			}
		}
	}
	for _, name := range order {
		bi := base[name]
		b := runVariant(runs[bi], name)
		for i := bi + 1; i < len(runs); i++ {
			a := runVariant(runs[i], name)
			if a == nil {
				continue
			}
			out = append(out, profileDiff(name, runs[i].Label, runs[bi].Label, *a, *b))
		}
	}
	return out
}

// runVariant is r's readable profile of variant, named variant/label.
func runVariant(r compare.Run, variant string) *profile.Variant {
	for _, v := range r.Profiles {
		if v.VariantProfile.Variant == variant && v.Profile != nil {
			pv := v.Variant
			pv.Name = variant + "/" + r.Label
			return &pv
		}
	}
	return nil
}

func profileDiff(variant, run, baseline string, a, b profile.Variant) compare.ProfileDiff {
	d := compare.ProfileDiff{Variant: variant, Run: run, Baseline: baseline, Seats: []compare.ProfileSeat{}, Funcs: []compare.ProfileFunc{}}
	kd := explain.Attribute(a, b)
	if kd.Err != "" {
		d.Err = kd.Err
		d.Text = fmt.Sprintf("%s − %s: the profile cannot explain it: %s\n", a.Name, b.Name, kd.Err)
		return d
	}
	at := kd.Attribution
	d.CallNs, d.BaselineCallNs, d.TotalNs = at.CallNsA, at.CallNsB, at.Total
	d.Explained, d.Unexplained = at.Explained, at.Unexplained
	for _, s := range at.Seats {
		d.Seats = append(d.Seats, compare.ProfileSeat{Func: s.Func, Kind: s.Kind.String(), Path: s.Path, ProfileFunc: funcOf(s.FuncDiff)})
	}
	for _, f := range kd.Funcs {
		d.Funcs = append(d.Funcs, funcOf(f))
	}
	d.Text = kd.Text()
	return d
}

func funcOf(f profile.FuncDiff) compare.ProfileFunc {
	return compare.ProfileFunc{Func: f.Func, DiffNs: f.Diff.Value, LowNs: f.Diff.Lo, HighNs: f.Diff.Hi, Samples: f.SamplesA, BaselineSamples: f.SamplesB}
}
