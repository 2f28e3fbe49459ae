// Package safeio is the safe file layer under package results: the one
// place where bytes from a results directory (or a file given on the
// command line) become typed values, and where every file of results is
// written. rtload runs as root and reads directories other people made,
// so nothing here trusts what it reads:
//
//   - Source (read.go) opens a directory for reading by descriptor
//     (os.Root) and its files by name, only regular ones: a symlink, FIFO,
//     socket or device is refused (ErrRefusedFile, *FileError) before
//     anything is read or can block; OpenInput and IsDir do the same for a
//     path given on the command line;
//   - Dir (dir.go) is a directory open for writing, checked to be the
//     effective user's and not writable by others; every file is created
//     with O_CREAT|O_EXCL|O_NOFOLLOW and whole files are replaced by
//     renaming a fresh temporary over them (WriteFile); a run claims its
//     directory (LockFile, lock.go), and takes over a killed run's;
//   - CheckOutPath and WriteOutputFile (outpath.go): an output path no
//     component of which another user owns or may write in (TrustedOwner,
//     OwnerOf);
//   - JSONL and EachJSONL (jsonl.go): records appended whole, a torn
//     write cut back; read back bounded, line by line, through Bounds;
//   - Inflate (inflate.go): gzip bounded by what it produces, not only by
//     what it reads (a limit and MaxInflateRatio);
//   - Bounds.Check (shape.go): the pre-pass over JSON that refuses lists
//     past their limits, memory past a budget and folded keys before
//     json.Unmarshal allocates anything;
//   - CheckHDR (hdrgeometry.go): an HdrHistogram encoding refused from its
//     header alone when its geometry needs more than MaxHDRCounts counts.
//
// Package results holds the schema and its limits, and package
// results/store, which reads and writes its files as its types, calls
// these; the package imports only the standard library and two
// stdlib-only leaves (internal/filekind, internal/termsafe).
package safeio
