package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/minfer/minfer/core"
	"github.com/minfer/minfer/internal/units"
)

func init() {
	register("inspect", "print what a GGUF file holds (index only, instant)", runInspect)
}

func runInspect(e Env, args []string) error {
	fs := newFlags("inspect", "FILE.gguf", e)
	asJSON := fs.Bool("json", false, "print JSON")
	path, err := oneFile(fs, args)
	if err != nil {
		return err
	}
	info, err := core.Inspect(path)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.Stdout, info)
	}
	return writeInfo(e.Stdout, info)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func writeInfo(w io.Writer, info *core.ModelInfo) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k string, format string, a ...any) { fmt.Fprintf(tw, "%s\t%s\n", k, fmt.Sprintf(format, a...)) }
	row("file", "%s (GGUF v%d)", info.Path, info.GGUFVersion)
	row("name", "%s", info.Name)
	sup := "supported"
	if !info.ArchSupported {
		sup = "not supported"
	}
	row("architecture", "%s (%s)", info.Arch, sup)
	row("parameters", "%s", units.Count(info.Params))
	row("file type", "%s (most weight bytes in %s)", info.FileType, info.Quant)
	row("size", "%s (%d bytes)", units.Bytes(info.FileSize), info.FileSize)
	row("context length", "%d (trained)", info.NCtxTrain)
	row("blocks", "%d", info.NLayers)
	row("embedding", "%d, %d heads (%d KV heads), head size %d, FFN %d", info.NEmbd, info.NHead, info.NHeadKV, info.HeadDim, info.NFF)
	if info.ExpertCount > 0 {
		row("experts", "%d per block, %d used per token (mixture of experts)", info.ExpertCount, info.ExpertUsed)
	}
	if info.SlidingWindow > 0 {
		row("sliding window", "%d positions on %d of %d blocks", info.SlidingWindow, info.SlidingBlocks, info.NLayers)
	}
	row("tokenizer", "%s, %d tokens", orNone(info.TokenizerModel), info.VocabSize)
	tmpl := "no"
	if info.ChatTemplate {
		tmpl = "yes"
	}
	if info.TemplateProblem != "" {
		tmpl += ", unusable: " + info.TemplateProblem
	}
	row("chat template", "%s", tmpl)
	for _, t := range info.Types {
		row("tensors "+t.Type, "%d tensors, %s", t.Tensors, units.Bytes(t.Bytes))
	}
	if info.Problem != "" {
		row("cannot load", "%s", info.Problem)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nweight bytes per block (what the offload fit charges):\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "block\tbytes\tMiB\t\n")
	var sum int64
	for i, b := range info.BlockBytes {
		fmt.Fprintf(tw, "%d\t%d\t%.2f\t\n", i, b, float64(b)/(1<<20))
		sum += b
	}
	fmt.Fprintf(tw, "outside blocks\t%d\t%.2f\t\n", info.UnblockedBytes, float64(info.UnblockedBytes)/(1<<20))
	fmt.Fprintf(tw, "total\t%d\t%.2f\t\n", sum+info.UnblockedBytes, float64(sum+info.UnblockedBytes)/(1<<20))
	return tw.Flush()
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
