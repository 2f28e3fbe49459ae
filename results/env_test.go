package results

import (
	"maps"
	"testing"
)

func TestEnvStrings(t *testing.T) {
	type facts struct {
		KernelConfig map[string]string `json:"kernel_config"`
	}
	decoded := map[string]any{"kernel_config": map[string]any{"CONFIG_X": "y", "CONFIG_HZ": float64(250)}, "kernel": "6.1"}
	for _, tc := range []struct {
		name string
		env  any
		key  string
		want map[string]string
	}{
		{"decoded", decoded, "kernel_config", map[string]string{"CONFIG_X": "y", "CONFIG_HZ": "250"}},
		{"struct", facts{KernelConfig: map[string]string{"CONFIG_X": "y"}}, "kernel_config", map[string]string{"CONFIG_X": "y"}},
		{"not an object", decoded, "kernel", nil},
		{"absent", decoded, "nothing", nil},
		{"nil env", nil, "kernel_config", nil},
	} {
		if got := EnvStrings(tc.env, tc.key); !maps.Equal(got, tc.want) {
			t.Errorf("%s: EnvStrings = %v, want %v", tc.name, got, tc.want)
		}
	}
}
