// Command htmlreport renders a ghz JSON report (-O json) as ghz's own HTML report.
//
// Usage: htmlreport REPORT.json REPORT.html
//
// ghz writes one output format per run; this converter lets one run give both, with the very
// printer the ghz CLI uses for -O html.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/bojand/ghz/printer"
	"github.com/bojand/ghz/runner"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: htmlreport REPORT.json REPORT.html")
		os.Exit(2)
	}
	if err := convert(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "htmlreport:", err)
		os.Exit(1)
	}
}

func convert(source, target string) error {
	data, err := os.ReadFile(source)
	if err != nil {
		return err
	}
	var report runner.Report
	if err := json.Unmarshal(data, &report); err != nil {
		return fmt.Errorf("%s: not a ghz JSON report: %w", source, err)
	}
	out, err := os.Create(target)
	if err != nil {
		return err
	}
	defer out.Close()
	return (&printer.ReportPrinter{Out: out, Report: &report}).Print("html")
}
