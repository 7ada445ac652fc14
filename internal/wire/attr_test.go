package wire

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestTypedAttr(t *testing.T) {
	for _, tt := range []struct {
		v    string
		want slog.Value
	}{
		{"true", slog.BoolValue(true)},
		{"false", slog.BoolValue(false)},
		{"42", slog.Int64Value(42)},
		{"-7", slog.Int64Value(-7)},
		{"007", slog.StringValue("007")},
		{"1.5", slog.Float64Value(1.5)},
		{"1.10", slog.StringValue("1.10")},
		{"1.5s", slog.DurationValue(1500 * time.Millisecond)},
		{"1500ms", slog.StringValue("1500ms")},
		{"NaN", slog.StringValue("NaN")},
		{"+Inf", slog.StringValue("+Inf")},
		{"True", slog.StringValue("True")},
		{"", slog.StringValue("")},
	} {
		t.Run(tt.v, func(t *testing.T) {
			got := TypedAttr("k", tt.v)
			assert.Equal(t, "k", got.Key)
			assert.True(t, got.Value.Equal(tt.want), "TypedAttr(k, %q) = %v (%v), want %v (%v)", tt.v, got.Value, got.Value.Kind(), tt.want, tt.want.Kind())
		})
	}
}
