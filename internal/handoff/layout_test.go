package handoff

import "unsafe"

func unsafeSizeof(e Record) uintptr { return unsafe.Sizeof(e) }
func unsafeOffsetofAttrs() uintptr  { var e Record; return unsafe.Offsetof(e.Attrs) }
