package config

import (
	"fmt"
	"strings"
)

// LookupEnv reports the value of an environment variable and whether it is
// set; os.LookupEnv is the default.
type LookupEnv func(name string) (string, bool)

// expand replaces every `${NAME}` and `${NAME:default}` in s. A set variable
// wins, even when empty; otherwise the default (everything after the first
// colon, itself expanded, so `${A:${B:x}}` nests) is used, and a placeholder
// without a default becomes "". Variable values are inserted literally.
func expand(s string, lookup LookupEnv) (string, error) {
	var b strings.Builder
	for {
		start := strings.Index(s, "${")
		if start < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:start])
		end := closingBrace(s, start+2)
		if end < 0 {
			return "", fmt.Errorf("unterminated placeholder in %q", s)
		}
		name, def, hasDef := strings.Cut(s[start+2:end], ":")
		if name == "" || strings.ContainsAny(name, "${} \t") {
			return "", fmt.Errorf("invalid placeholder %q", s[start:end+1])
		}
		if v, ok := lookup(name); ok {
			b.WriteString(v)
		} else if hasDef {
			v, err := expand(def, lookup)
			if err != nil {
				return "", err
			}
			b.WriteString(v)
		}
		s = s[end+1:]
	}
}

// closingBrace returns the index of the `}` closing a placeholder whose body
// starts at i, skipping nested placeholders, or -1.
func closingBrace(s string, i int) int {
	depth := 1
	for ; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "${"):
			depth++
			i++
		case s[i] == '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}
