package otlp

import "testing"

// FuzzPartialSuccess: a collector's (or anything listening on the endpoint's) answer
// body never panics the exporter, in either encoding.
func FuzzPartialSuccess(f *testing.F) {
	f.Add([]byte{0x0a, 0x07, 0x08, 0x01, 0x12, 0x03, 'b', 'a', 'd'}, false)
	f.Add([]byte(`{"partialSuccess":{"rejectedLogRecords":"2","errorMessage":"x"}}`), true)
	f.Fuzz(func(t *testing.T, body []byte, isJSON bool) {
		ct := "application/x-protobuf"
		if isJSON {
			ct = "application/json"
		}
		partialSuccess(body, ct)
	})
}
