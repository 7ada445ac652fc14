package sink

// A logDir is where a dirFile's files are: the bound directory, held
// open (dh), and this process's names in it. The file is opened, checked,
// renamed and pruned relative to dh, so a directory renamed or removed
// after the bind, or a symbolic link planted at its path, never takes the
// files elsewhere; only Reopen looks the path up again (dirFile.reopen).
// It belongs to one dirFile and, like it, is not safe for concurrent use.
type logDir struct {
	abs      string    // the directory, absolute; immutable
	name     string    // the file's name, host.<pid>.log; immutable
	filePath string    // abs/name, the file's path (Sink.Path); immutable
	dh       dirHandle // abs, held open; replaced only by dirFile.reopen
}
