//go:build !unix

package results

import "io/fs"

// ownerOf reports no owner: outside Unix rtload does not run as root and
// file ownership has no uid to compare.
func ownerOf(fs.FileInfo) (uid int, ok bool) { return 0, false }
