package console

import (
	"bytes"
	"embed"
	"html"
	"io/fs"
	"net/http"
	"strings"
	"unicode/utf8"
)

// Path is where the console is mounted; it redirects to Path + "/".
const Path = "/console"

//go:embed static
var files embed.FS

// basePlaceholder in index.html is replaced by the API base path.
const basePlaceholder = "{{BASE_PATH}}"

// securityHeaders are set on every answer: the page runs only its own
// scripts and talks only to its own origin.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
	"X-Content-Type-Options":  "nosniff",
	"Referrer-Policy":         "no-referrer",
	"Cache-Control":           "no-cache",
}

// Handler serves the console under Path for an API whose routes are under
// basePath (e.g. contract.BasePath): Path itself redirects to Path + "/", which
// serves index.html, and Path + "/<file>" serves the embedded files.
func Handler(basePath string) http.Handler {
	static, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the embedded tree always has static/
	}
	index, err := fs.ReadFile(static, "index.html")
	if err != nil {
		panic(err)
	}
	index = bytes.ReplaceAll(index, []byte(basePlaceholder), []byte(html.EscapeString(basePath)))
	fileServer := http.StripPrefix(Path+"/", http.FileServerFS(static))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range securityHeaders {
			w.Header().Set(k, v)
		}
		switch rest := strings.TrimPrefix(r.URL.Path, Path); rest {
		case "":
			http.Redirect(w, r, Path+"/", http.StatusMovedPermanently)
		case "/", "/index.html":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(index)
		default:
			// A name fs.FS cannot hold (invalid UTF-8, "..", empty
			// elements) is no file of ours: 404, not the file server's 500.
			if name := strings.TrimPrefix(rest, "/"); !fs.ValidPath(name) || !utf8.ValidString(name) {
				http.NotFound(w, r)
				return
			}
			fileServer.ServeHTTP(w, r)
		}
	})
}
