package valves

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Sources maps a valve name ("auth.mode") to where its value came from: "default", "file",
// "env" or "flag".
type Sources map[string]string

// The values of Sources.
const (
	fromDefault = "default"
	fromFile    = "file"
	fromEnv     = "env"
	fromFlag    = "flag"
)

// maxSecretFile bounds a FILESHED_*_FILE read, so that a mistaken path (/dev/zero, a log)
// fails at start-up instead of filling memory.
const maxSecretFile = 64 << 10

// setting is one value given as text by an environment variable or a flag.
type setting struct {
	v      *valve
	raw    string
	origin string // the variable or flag that gave it, for error messages
}

// Load builds the effective configuration. defaults is the embedded valves.yaml, args the
// command-line arguments after the program name (and subcommand), env looks a variable up
// (os.LookupEnv in main). Precedence: flags > env > the file named by --config or
// FILESHED_CONFIG > defaults. The result is validated; every error names the valve, key,
// flag or variable at fault, never a secret's value.
func Load(defaults []byte, args []string, env func(string) (string, bool)) (*Config, Sources, error) {
	configPath, flags, err := parseArgs(args)
	if err != nil {
		return nil, nil, err
	}
	cfg, src := &Config{}, Sources{}
	for _, v := range all {
		src[v.name] = fromDefault
	}
	if err := overlay(cfg, src, defaults, "embedded valves.yaml", fromDefault); err != nil {
		return nil, nil, err
	}
	if configPath == "" {
		configPath, _ = env(configEnv)
	}
	if configPath != "" {
		data, err := os.ReadFile(configPath)
		if err != nil {
			return nil, nil, fmt.Errorf("config file: %w", err)
		}
		if err := overlay(cfg, src, data, "config file "+configPath, fromFile); err != nil {
			return nil, nil, err
		}
	}
	envs, err := fromEnvironment(env)
	if err != nil {
		return nil, nil, err
	}
	if err := apply(cfg, src, envs, fromEnv); err != nil {
		return nil, nil, err
	}
	if err := apply(cfg, src, flags, fromFlag); err != nil {
		return nil, nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	return cfg, src, nil
}

// overlay sets, in cfg, the valves that the YAML document data contains, and records source
// for them; valves it leaves out keep their value. A whole list or map replaces the old one.
func overlay(cfg *Config, src Sources, data []byte, label, source string) error {
	// KnownFields makes a misspelt key an error naming it, instead of a silently ignored line.
	var parsed Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&parsed); err != nil {
		if errors.Is(err, io.EOF) { // empty, or comments only
			return nil
		}
		return fmt.Errorf("%s: %w", label, humanTypeErrors(data, err))
	}
	// A second document would be ignored silently, like an unknown key: refuse it too.
	if err := dec.Decode(new(yaml.Node)); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: more than one YAML document (a stray \"---\"?)", label)
	}
	// A second, untyped decode says which keys are present (aliases and merges resolved), so
	// that an absent key is not mistaken for a zero value.
	var present map[string]any
	if err := yaml.Unmarshal(data, &present); err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	for _, v := range all {
		if has(present, v.name) {
			v.field(cfg).Set(v.field(&parsed))
			src[v.name] = source
		}
	}
	return nil
}

// has reports whether the dotted name is a key path in m.
func has(m map[string]any, name string) bool {
	section, key, nested := strings.Cut(name, ".")
	if !nested {
		_, ok := m[name]
		return ok
	}
	sub, ok := m[section].(map[string]any)
	return ok && has(sub, key)
}

// parseArgs reads "--name value" and "--name=value" arguments. A bool flag alone means true
// (give false as --name=false). --config names the config file.
func parseArgs(args []string) (configPath string, out []setting, err error) {
	for i := 0; i < len(args); i++ {
		arg := args[i]
		name, raw, hasValue := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		if !strings.HasPrefix(arg, "--") || name == "" {
			return "", nil, fmt.Errorf("unexpected argument %q: flags are --name value or --name=value", arg)
		}
		v := byFlag[name]
		if v == nil && name != "config" {
			return "", nil, fmt.Errorf("unknown flag --%s (valves: fileshed valves lists them)", name)
		}
		if !hasValue {
			if v != nil && v.typ.Kind() == reflect.Bool {
				raw = "true"
			} else if i+1 < len(args) {
				i++
				raw = args[i]
			} else {
				return "", nil, fmt.Errorf("flag --%s needs a value", name)
			}
		}
		if v == nil {
			configPath = raw
			continue
		}
		out = append(out, setting{v: v, raw: raw, origin: "flag --" + name})
	}
	return configPath, out, nil
}

// fromEnvironment collects the FILESHED_* variables that are set. A secret may come from
// FILESHED_<NAME>_FILE instead: the file's content without its trailing newline.
func fromEnvironment(env func(string) (string, bool)) ([]setting, error) {
	var out []setting
	for i := range all {
		v := &all[i]
		raw, ok := env(v.env())
		if v.secret {
			path, hasFile := env(v.env() + "_FILE")
			if ok && hasFile {
				return nil, fmt.Errorf("%s and %s_FILE are both set: keep one", v.env(), v.env())
			}
			if hasFile {
				s, err := readSecret(path)
				if err != nil {
					return nil, fmt.Errorf("%s_FILE: %w", v.env(), err)
				}
				raw, ok = s, true
			}
		}
		if ok {
			out = append(out, setting{v: v, raw: raw, origin: v.env()})
		}
	}
	return out, nil
}

// readSecret reads a secret file of at most maxSecretFile bytes and trims trailing newlines.
func readSecret(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxSecretFile {
		return "", fmt.Errorf("secret file is larger than %d bytes", maxSecretFile)
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

// apply parses and sets each setting in order (a later one wins) and records source. All
// unparsable settings are reported together.
func apply(cfg *Config, src Sources, settings []setting, source string) error {
	var errs []error
	for _, s := range settings {
		val, err := s.v.parse(s.raw)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s (valve %s): %w", s.origin, s.v.name, err))
			continue
		}
		s.v.field(cfg).Set(val)
		src[s.v.name] = source
	}
	return errors.Join(errs...)
}
