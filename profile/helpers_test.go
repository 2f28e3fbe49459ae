package profile

import "reflect"

// funcPC is the entry address of function f.
func funcPC(f any) uint64 { return uint64(reflect.ValueOf(f).Pointer()) }
