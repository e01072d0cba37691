package flow

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// Project settings: keys, their values and defaults.
const (
	// SettingSelfGrant says whether the one who asked for an approval
	// may decide it: "deny" (the default) or "allow".
	SettingSelfGrant = "approvals.self_grant"
)

// settings are the keys of project settings, with their values; the
// first value is the default.
var settings = map[string][]string{
	SettingSelfGrant: {"deny", "allow"},
}

// SettingKeys returns the keys of project settings, sorted.
func SettingKeys() []string { return slices.Sorted(maps.Keys(settings)) }

// SettingValues returns the values a setting takes, its default first,
// or nil for a key that is not a setting.
func SettingValues(key string) []string { return slices.Clone(settings[key]) }

// ProjectSettings returns every setting of p, each with its value or
// its default.
func ProjectSettings(p *projection.Project) map[string]string {
	out := make(map[string]string, len(settings))
	for k := range settings {
		out[k] = setting(p, k)
	}
	return out
}

// setting returns p's value of key, or its default.
func setting(p *projection.Project, key string) string {
	if v := p.Setting(key); v != "" {
		return v
	}
	return settings[key][0]
}

// SetSetting is the input of SetProjectSetting.
type SetSetting struct {
	Project string `json:"project"`
	Key     string `json:"key"`
	Value   string `json:"value"`
	Write
}

func (in *SetSetting) check() error {
	values, ok := settings[in.Key]
	if !ok {
		return fmt.Errorf("%w: project setting %q: the settings are %s", ErrInvalid, in.Key, strings.Join(SettingKeys(), ", "))
	}
	if !slices.Contains(values, in.Value) {
		return fmt.Errorf("%w: %s takes %s, not %q", ErrInvalid, in.Key, strings.Join(values, " or "), in.Value)
	}
	return nil
}

// SetProjectSetting sets one project setting, appending a
// project.setting_changed event on the project's stream; setting the
// value it has (or its default, when unset) appends nothing. Errors: ErrInvalid (key or value), ErrNotFound,
// ErrConflict (archived project, IfVersion).
func (e *Engine) SetProjectSetting(in SetSetting) (*projection.Project, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	_, err := e.command(in.Write, "project.set", in, func(w *writer) (Ref, error) {
		ref := Ref{Kind: projection.KindProject, Project: in.Project}
		p, err := openProject(w, in.Project)
		if err != nil {
			return ref, err
		}
		stream := projection.ProjectStream(in.Project)
		if setting(p, in.Key) == in.Value {
			return ref, checkVersion(in.Write, p.Version, stream)
		}
		_, err = w.emit(stream, in.expect(), in.Project, projection.TypeProjectSettingChanged,
			projection.ProjectSettingChanged{Key: in.Key, Value: in.Value})
		return ref, err
	})
	if err != nil {
		return nil, err
	}
	return e.Project(in.Project)
}

// ErrSelfDecision: the one who asked for an approval tried to decide it,
// and the project does not allow it (a conflict, exit 4).
var ErrSelfDecision = fmt.Errorf("%w: an approval is not decided by the one who asked for it", store.ErrConflict)
