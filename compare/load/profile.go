package load

import (
	"fmt"

	"github.com/rtload/rtload/compare"
	"github.com/rtload/rtload/explain"
	"github.com/rtload/rtload/results/store"
)

// loadProfiles reads r's variant profiles (results directories only).
func loadProfiles(r *compare.Run) {
	s := r.Summary
	for _, vp := range s.Profiles {
		v := explain.LoadVariant(s, vp, func(name string) ([]byte, error) { return store.ReadProfileFile(r.Dir, name) })
		if v.Err != "" {
			n := fmt.Sprintf("profile of %s not read: %s", vp.Variant, v.Err)
			r.Notes, r.Unread = append(r.Notes, n), append(r.Unread, n)
		}
		r.Profiles = append(r.Profiles, v)
	}
}
