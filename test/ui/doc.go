// Package ui holds the dashboard's browser test: a local fleet (a hub, one full spoke and two
// API-only spokes) with `flotilla hub --dashboard-bind-address` and `flotilla dashboard`,
// driven through Debian's chromium with chromedp. The test is behind the uitest build tag, so
// `make test` stays Go-only; `make test-ui` runs it and writes a screenshot of each view to
// $FLOTILLA_UI_ARTIFACTS.
package ui
