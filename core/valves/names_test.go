package valves

import (
	"reflect"
	"slices"
	"testing"
)

// TestDerivedNames pins a few public names (deployments and scripts use them).
func TestDerivedNames(t *testing.T) {
	tests := []struct{ valve, flag, env string }{
		{"listen", "listen", "FILESHED_LISTEN"},
		{"auth.mode", "auth-mode", "FILESHED_AUTH_MODE"},
		{"auth.api_key", "auth-api-key", "FILESHED_AUTH_API_KEY"},
		{"openwebui.url", "openwebui-url", "FILESHED_OPENWEBUI_URL"},
		{"openwebui.admin_api_key", "openwebui-admin-api-key", "FILESHED_OPENWEBUI_ADMIN_API_KEY"},
		{"quota_per_user_mb", "quota-per-user-mb", "FILESHED_QUOTA_PER_USER_MB"},
		{"cors.allowed_origins", "cors-allowed-origins", "FILESHED_CORS_ALLOWED_ORIGINS"},
		{"links.mode", "links-mode", "FILESHED_LINKS_MODE"},
	}
	for _, tt := range tests {
		t.Run(tt.valve, func(t *testing.T) {
			v := byFlag[tt.flag]
			if v == nil || v.name != tt.valve {
				t.Fatalf("flag --%s is %v, want valve %s", tt.flag, v, tt.valve)
			}
			if v.env() != tt.env {
				t.Errorf("env = %s, want %s", v.env(), tt.env)
			}
		})
	}
}

// TestDerivedNamesAreUnique: no two valves share a flag or a variable, and no valve's
// variable collides with FILESHED_CONFIG or with another secret's _FILE variant.
func TestDerivedNamesAreUnique(t *testing.T) {
	flags := map[string]string{"config": "--config"}
	envs := map[string]string{configEnv: "config file"}
	for _, v := range all {
		names := []string{v.env()}
		if v.secret {
			names = append(names, v.env()+"_FILE")
		}
		for _, e := range names {
			if other, dup := envs[e]; dup {
				t.Errorf("%s: variable %s already used by %s", v.name, e, other)
			}
			envs[e] = v.name
		}
		if other, dup := flags[v.flag()]; dup {
			t.Errorf("%s: flag --%s already used by %s", v.name, v.flag(), other)
		}
		flags[v.flag()] = v.name
	}
}

// TestSecretsAreTagged: the valves that hold secrets are exactly these (Report redacts them,
// and they alone accept _FILE).
func TestSecretsAreTagged(t *testing.T) {
	var got []string
	for _, v := range all {
		if v.secret {
			got = append(got, v.name)
		}
	}
	want := []string{"state.url", "auth.api_key", "auth.jwt_secret", "openwebui.admin_api_key", "links.secret", "metrics.token", "encryption.master_key"}
	if !slices.Equal(got, want) {
		t.Errorf("secrets = %v, want %v", got, want)
	}
}

// TestCollectRefusesMalformedTags: the init-time guards that keep every int bounded and every
// secret a string (so no parse error can echo one) really fire.
func TestCollectRefusesMalformedTags(t *testing.T) {
	tests := []struct {
		name string
		typ  reflect.Type
	}{
		{"int without range", reflect.TypeFor[struct {
			N int `yaml:"n"`
		}]()},
		{"int with bad max", reflect.TypeFor[struct {
			N int `yaml:"n" min:"0" max:"lots"`
		}]()},
		{"secret that is not a string", reflect.TypeFor[struct {
			S []string `yaml:"s" secret:"true"`
		}]()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("collect accepted a malformed field")
				}
			}()
			collect(tt.typ, "", nil)
		})
	}
}
