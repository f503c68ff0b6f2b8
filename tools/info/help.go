package info

import (
	"context"
	"embed"
	"sort"
	"strings"

	"github.com/fileshed/fileshed/core"
)

//go:embed guides/*.md
var guideFiles embed.FS

// HelpInput is the input of shed_help.
type HelpInput struct {
	Howto string `json:"howto,omitempty" doc:"Guide name, or \"\" for the quick reference"`
}

// guides maps a topic to its text; the first line of each file is "# topic: description".
func guides() (map[string]string, map[string]string) {
	texts, descs := map[string]string{}, map[string]string{}
	entries, _ := guideFiles.ReadDir("guides")
	for _, e := range entries {
		topic := strings.TrimSuffix(e.Name(), ".md")
		b, _ := guideFiles.ReadFile("guides/" + e.Name())
		text := string(b)
		first, _, _ := strings.Cut(text, "\n")
		_, desc, _ := strings.Cut(first, ": ")
		texts[topic], descs[topic] = text, desc
	}
	return texts, descs
}

// Help answers shed_help: the quick reference, one guide, or all of them.
func (s *Tools) Help(_ context.Context, _ core.Caller, in HelpInput) (core.Result, error) {
	texts, descs := guides()
	quick := texts["quick"]
	delete(texts, "quick")
	delete(descs, "quick")
	topic := strings.ToLower(strings.TrimSpace(in.Howto))
	switch topic {
	case "":
		return core.Result{Data: helpQuick{Help: quick, Howtos: descs},
			Message: "Help in data.help, howtos comprehensive list in data.howtos"}, nil
	case "full":
		names := make([]string, 0, len(texts))
		for t := range texts {
			names = append(names, t)
		}
		sort.Strings(names)
		parts := []string{quick}
		for _, t := range names {
			parts = append(parts, texts[t])
		}
		return core.Result{Data: helpText{Help: strings.Join(parts, "\n\n")}, Message: "Full documentation in data.help"}, nil
	}
	text, ok := texts[topic]
	if !ok {
		return core.Result{}, core.Errf(core.InvalidParameter, "Unknown howto '%s'", in.Howto).With("howtos", descs).
			WithHint("Call shed_help() without howto to see the guides, or howto='full'")
	}
	return core.Result{Data: helpText{Help: text, Topic: topic}, Message: "Guide '" + topic + "' in data.help"}, nil
}
