package profile

import (
	"fmt"
	"slices"
	"strings"
)

// Hook is a kernel hardening or debug option whose code shows up as
// functions of its own in a profile.
type Hook struct {
	// Option is the kernel config option that builds the hook in, e.g.
	// "CONFIG_HARDENED_USERCOPY".
	Option string
	// Configs are the config options any of which set to y turns it on by
	// default (for lockdep: CONFIG_PROVE_LOCKING, CONFIG_DEBUG_LOCK_ALLOC,
	// CONFIG_LOCK_STAT, which select CONFIG_LOCKDEP).
	Configs []string
	// Cmdline is the boot parameter that overrides the default
	// ("hardened_usercopy=off", "init_on_alloc=0"), "" when none.
	Cmdline string
	// What says what the hook does, in one line.
	What string
	// funcs are exact names (after BaseName); prefixes name families.
	funcs, prefixes []string
	// callers, when set, limit a match to frames called by one of these
	// (memset is init_on_alloc's only inside the slab allocator).
	callers []string
}

// hookTable is every hook Attribute knows. Sources: mm/usercopy.c
// (__check_object_size, check_heap_object), mm/page_alloc.c and
// mm/slub.c (kernel_init_pages, slab_post_alloc_hook's memset,
// slab_free_hook's memset), mm/kasan, kernel/kcsan, kernel/locking/lockdep.c.
var hookTable = []Hook{
	{Option: "CONFIG_HARDENED_USERCOPY", Configs: []string{"CONFIG_HARDENED_USERCOPY"}, Cmdline: "hardened_usercopy",
		What:  "checks every copy_to/from_user object against slab and stack bounds",
		funcs: []string{"__check_object_size", "check_heap_object", "__check_heap_object", "check_stack_object", "check_kernel_text_object", "usercopy_abort"}},
	{Option: "CONFIG_INIT_ON_ALLOC_DEFAULT_ON", Configs: []string{"CONFIG_INIT_ON_ALLOC_DEFAULT_ON"}, Cmdline: "init_on_alloc",
		What:    "zeroes every page and slab object on allocation",
		funcs:   []string{"kernel_init_pages", "clear_page_erms", "clear_page_rep", "clear_page_orig", "memset", "__memset", "memset_orig", "memset_erms"},
		callers: []string{"post_alloc_hook", "prep_new_page", "kernel_init_pages", "slab_post_alloc_hook", "slab_alloc_node", "kmem_cache_alloc", "kmem_cache_alloc_node", "kmem_cache_alloc_noprof", "kmem_cache_alloc_node_noprof", "__kmalloc", "__kmalloc_noprof", "__kmalloc_node_track_caller_noprof", "kmalloc_reserve"}},
	{Option: "CONFIG_INIT_ON_FREE_DEFAULT_ON", Configs: []string{"CONFIG_INIT_ON_FREE_DEFAULT_ON"}, Cmdline: "init_on_free",
		What:    "zeroes every page and slab object on free",
		funcs:   []string{"kernel_init_pages", "clear_page_erms", "clear_page_rep", "clear_page_orig", "memset", "__memset", "memset_orig", "memset_erms"},
		callers: []string{"free_pages_prepare", "free_unref_page_prepare", "kernel_init_pages", "slab_free_hook", "slab_free_freelist_hook", "slab_free", "kmem_cache_free", "kfree", "__slab_free"}},
	{Option: "CONFIG_KASAN", Configs: []string{"CONFIG_KASAN"},
		What:     "KASAN: shadow-memory checks on every load and store",
		prefixes: []string{"__asan_", "kasan_", "__kasan_", "check_region_inline", "kasan_check_range"}},
	{Option: "CONFIG_KCSAN", Configs: []string{"CONFIG_KCSAN"},
		What:     "KCSAN: data-race watchpoints on memory accesses",
		prefixes: []string{"__tsan_", "kcsan_", "__kcsan_"}},
	{Option: "CONFIG_LOCKDEP", Configs: []string{"CONFIG_PROVE_LOCKING", "CONFIG_DEBUG_LOCK_ALLOC", "CONFIG_LOCK_STAT"},
		What:     "lockdep: lock-order validation on every lock acquire and release",
		funcs:    []string{"lock_acquire", "lock_release", "__lock_acquire", "lock_acquired", "lock_contended", "lock_is_held_type", "mark_lock", "validate_chain", "check_prev_add", "check_noncircular", "mark_held_locks"},
		prefixes: []string{"lockdep_", "__lockdep_"}},
}

// Hooks returns the known hooks (a copy).
func Hooks() []Hook { return slices.Clone(hookTable) }

// HookConfigKeys lists the kernel config options Hook.State reads; the
// kernel config map passed to it must have been read with these keys
// (sysinfo's kernel config keys include them).
func HookConfigKeys() []string {
	var keys []string
	for _, h := range hookTable {
		for _, c := range h.Configs {
			if !slices.Contains(keys, c) {
				keys = append(keys, c)
			}
		}
	}
	return append(keys, "CONFIG_HARDENED_USERCOPY_DEFAULT_ON")
}

// HookAt returns the hook that frames[i] belongs to, given its caller
// frames[i+1] (frames innermost first). Only kernel frames match.
func HookAt(frames []Frame, i int) (Hook, bool) {
	f := frames[i]
	if !f.Kernel {
		return Hook{}, false
	}
	name := BaseName(f.Func)
	caller := ""
	if i+1 < len(frames) && frames[i+1].Kernel {
		caller = BaseName(frames[i+1].Func)
	}
	for _, h := range hookTable {
		if !slices.Contains(h.funcs, name) && !hasPrefix(h.prefixes, name) {
			continue
		}
		if len(h.callers) > 0 && !slices.Contains(h.callers, caller) {
			continue
		}
		return h, true
	}
	return Hook{}, false
}

// OptionState says whether a hook's option is on in a kernel.
type OptionState struct {
	// Known is false when the kernel config was not readable.
	Known, On bool
	// Why gives the evidence: "CONFIG_HARDENED_USERCOPY=y, no
	// hardened_usercopy= on the command line".
	Why string
}

// String is "on (why)", "off (why)" or "unknown (why)".
func (s OptionState) String() string {
	switch {
	case !s.Known:
		return "unknown (" + s.Why + ")"
	case s.On:
		return "on (" + s.Why + ")"
	}
	return "off (" + s.Why + ")"
}

// State says whether h is on in the kernel whose config options and
// command-line hardening parameters are given (sysinfo.Facts'
// KernelConfig and Hardening maps of the run: the kernel the profile was
// taken on, not the one reading it). A nil config is unknown unless the
// command line decides. An option absent from a readable config is off.
func (h Hook) State(config, cmdline map[string]string) OptionState {
	if v, ok := cmdline[h.Cmdline]; ok && h.Cmdline != "" {
		on := v == "1" || v == "on" || v == "y"
		if h.Option == "CONFIG_HARDENED_USERCOPY" && config != nil && config[h.Option] != "y" {
			return OptionState{true, false, fmt.Sprintf("%s=%s but %s is not y", h.Cmdline, v, h.Option)}
		}
		return OptionState{true, on, fmt.Sprintf("%s=%s on the command line", h.Cmdline, v)}
	}
	if config == nil {
		return OptionState{Why: "kernel config not readable"}
	}
	var set []string
	for _, c := range h.Configs {
		if config[c] == "y" {
			set = append(set, c+"=y")
		}
	}
	on := len(set) > 0
	why := strings.Join(set, ", ")
	if !on {
		why = strings.Join(h.Configs, ", ") + " not set"
	}
	if h.Option == "CONFIG_HARDENED_USERCOPY" && on && config["CONFIG_HARDENED_USERCOPY_DEFAULT_ON"] == "n" {
		on, why = false, why+", CONFIG_HARDENED_USERCOPY_DEFAULT_ON not set"
	}
	if h.Cmdline != "" {
		why += fmt.Sprintf(", no %s= on the command line", h.Cmdline)
	}
	return OptionState{true, on, why}
}
