package sqlq

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Text is a value as CSV text: NULL empty, numbers as SQLite prints them, BLOBs as hex,
// times (the driver turns DATE/DATETIME/TIMESTAMP columns into times) as ISO 8601.
func Text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return fmt.Sprintf("%x", x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		switch {
		case math.IsInf(x, 1):
			return "Inf"
		case math.IsInf(x, -1):
			return "-Inf"
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		if x {
			return "1"
		}
		return "0"
	case time.Time:
		if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
			return x.Format(time.DateOnly)
		}
		if x.Location() == time.UTC {
			return x.Format("2006-01-02 15:04:05.999999999")
		}
		return x.Format("2006-01-02 15:04:05.999999999-07:00")
	}
	return fmt.Sprint(v)
}
