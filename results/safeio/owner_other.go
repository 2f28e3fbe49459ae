//go:build !unix

package safeio

import "io/fs"

// OwnerOf reports no owner: outside Unix rtload does not run as root and
// file ownership has no uid to compare.
func OwnerOf(fs.FileInfo) (uid int, ok bool) { return 0, false }
