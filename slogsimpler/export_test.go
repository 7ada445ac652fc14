package slogsimpler

// CapturedAll is c's Records with the library's own records (anchors,
// drop reports, its ERROR reports), for the external tests.
func CapturedAll(c *Capture) []CapturedRecord { return c.records(true) }

// AfterRun is afterRun, for the external tests.
var AfterRun = afterRun
