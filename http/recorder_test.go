package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The request observer and the audit middleware share one recorder: a
// recorder asked for over a recorder is that recorder.
func TestRecorderWrapsOnce(t *testing.T) {
	outer := recorderFor(httptest.NewRecorder())
	if inner := recorderFor(outer); inner != outer {
		t.Fatal("recorderFor wrapped a statusRecorder again")
	}
}

func TestRecorderNotesStatusAndErrorCode(t *testing.T) {
	for name, tc := range map[string]struct {
		write      func(w http.ResponseWriter)
		status     int
		code       string
		errBodyLen int
	}{
		"nothing written": {func(http.ResponseWriter) {}, http.StatusOK, "", 0},
		"body only":       {func(w http.ResponseWriter) { _, _ = w.Write([]byte(`{"ok":true}`)) }, http.StatusOK, "", 0},
		"first status wins": {func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusConflict)
			w.WriteHeader(http.StatusOK)
		}, http.StatusConflict, "", 0},
		"error body": {func(w http.ResponseWriter) {
			writeError(w, http.StatusNotFound, "GROUP_NOT_FOUND", "Group not found")
		}, http.StatusNotFound, "GROUP_NOT_FOUND", -1},
		"long error body": {func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(strings.Repeat("x", 3*maxErrorBody)))
		}, http.StatusBadRequest, "", maxErrorBody},
	} {
		t.Run(name, func(t *testing.T) {
			under := httptest.NewRecorder()
			rec := recorderFor(under)
			tc.write(rec)
			if got := rec.answered(); got != tc.status || under.Code != tc.status {
				t.Errorf("answered %d, sent %d, want %d", got, under.Code, tc.status)
			}
			if got := rec.errorCode(); got != tc.code {
				t.Errorf("errorCode %q, want %q", got, tc.code)
			}
			if tc.errBodyLen >= 0 && len(rec.errBody) != tc.errBodyLen {
				t.Errorf("kept %d bytes of the body, want %d", len(rec.errBody), tc.errBodyLen)
			}
			if got := http.NewResponseController(rec).Flush(); got != nil {
				t.Errorf("Flush through the recorder: %v", got)
			}
		})
	}
}
