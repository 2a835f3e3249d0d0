package cli

import "flag"

func newGoFlagSet() *flag.FlagSet { return flag.NewFlagSet("flotilla", flag.ContinueOnError) }
