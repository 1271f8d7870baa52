package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/minfer/minfer/core"
	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/internal/engine"
)

func init() {
	register("run", "one-shot generation for scripts: prompt in, text out", runRun)
	register("chat", "chat with a model in the terminal", runChat)
	register("tokenize", "print the token ids of a text (or the text of ids with --ids)", runTokenize)
}

// samplerFlags are the sampling settings shared by run and chat.
type samplerFlags struct {
	temp, topP, minP, repeat, presence float64
	topK, repeatN, maxTokens           int
	seed                               uint64
	stops                              stringList
}

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func addSamplerFlags(fs *flagSet, defMax int) *samplerFlags {
	d := chat.DefaultSamplerSettings()
	s := &samplerFlags{}
	fs.Float64Var(&s.temp, "temp", float64(d.Temperature), "temperature (0 = greedy)")
	fs.IntVar(&s.topK, "top-k", d.TopK, "top-k (0 = off)")
	fs.Float64Var(&s.topP, "top-p", float64(d.TopP), "top-p (1 = off)")
	fs.Float64Var(&s.minP, "min-p", float64(d.MinP), "min-p (0 = off)")
	fs.Float64Var(&s.repeat, "repeat-penalty", float64(d.RepeatPenalty), "repetition penalty (1 = off)")
	fs.IntVar(&s.repeatN, "repeat-last-n", d.RepeatLastN, "tokens the repetition penalty looks back over")
	fs.Float64Var(&s.presence, "presence-penalty", float64(d.PresencePenalty), "presence penalty (0 = off)")
	fs.Uint64Var(&s.seed, "seed", d.Seed, "random seed (same seed + settings = same text)")
	fs.IntVar(&s.maxTokens, "n", defMax, "maximum tokens to generate (0 = until the end of the turn)")
	fs.Var(&s.stops, "stop", "stop string (repeatable)")
	return s
}

func (s *samplerFlags) options() chat.GenOptions {
	st := chat.DefaultSamplerSettings()
	st.Temperature, st.TopK, st.TopP, st.MinP = float32(s.temp), s.topK, float32(s.topP), float32(s.minP)
	st.RepeatPenalty, st.RepeatLastN, st.PresencePenalty, st.Seed = float32(s.repeat), s.repeatN, float32(s.presence), s.seed
	return chat.GenOptions{Sampler: st, MaxTokens: s.maxTokens, Stop: s.stops}
}

func runRun(e Env, args []string) error {
	fs := newFlagSet("run", "-m FILE.gguf -p PROMPT [-n N]", e)
	lf := addLoadFlags(fs)
	prompt := fs.String("p", "", "prompt text (raw completion: no chat template)")
	sf := addSamplerFlags(fs, 128)
	stats := fs.Bool("stats", false, "print token counts and speed to stderr")
	if err := fs.Parse(args); err != nil {
		return err
	}
	opts := sf.options()
	if err := opts.Sampler.Validate(); err != nil {
		return usagef("%v", err)
	}
	return lf.withSession(e, func(ctx context.Context, s *core.Session) error {
		conv, _, err := s.Conversation()
		if err != nil {
			return err
		}
		w := bufio.NewWriter(e.Stdout)
		_, st, err := conv.Complete(ctx, *prompt, opts, func(ev chat.Event) {
			w.WriteString(ev.Text)
			w.Flush()
		})
		fmt.Fprintln(w)
		w.Flush()
		if *stats {
			printStats(e.Stderr, st, s.OffloadReport().Where())
		}
		return err
	})
}

// printStats prints a reply's counts and speed; where, when set, says
// where the blocks ran ("22/22 blocks on CUDA NVIDIA H200").
func printStats(w io.Writer, st chat.Stats, where string) {
	if where != "" {
		where = " · " + where
	}
	if st.PrefillTime == 0 && st.ReusedTokens == 0 {
		// A remote reply: the server reports counts, not timings.
		fmt.Fprintf(w, "[%d prompt tokens · %d generated, %.1f tok/s · %s%s]\n", st.PromptTokens, st.Generated, st.GenRate(), st.StopReason, where)
		return
	}
	fmt.Fprintf(w, "[%d prompt tokens (%d reused, %d evaluated, %.1f tok/s) · %d generated, %.1f tok/s · %s%s]\n",
		st.PromptTokens, st.ReusedTokens, st.PrefillTokens, st.PrefillRate(), st.Generated, st.GenRate(), st.StopReason, where)
}

func runChat(e Env, args []string) error {
	fs := newFlagSet("chat", "-m FILE.gguf | --remote URL [--api-key KEY] [--model ID]", e)
	lf := addLoadFlags(fs)
	system := fs.String("system", "", "system prompt")
	remote := fs.String("remote", "", "chat through an OpenAI-compatible server at URL (e.g. http://127.0.0.1:8080) instead of loading a model")
	apiKey := fs.String("api-key", "", "API key for --remote (default: $MINFER_API_KEY)")
	modelID := fs.String("model", "", "model id on the --remote server (default: the first it lists)")
	noStream := fs.Bool("no-stream", false, "with --remote: ask for whole replies instead of a token stream")
	sf := addSamplerFlags(fs, 0)
	if err := fs.Parse(args); err != nil {
		return err
	}
	opts := sf.options()
	if err := opts.Sampler.Validate(); err != nil {
		return usagef("%v", err)
	}
	var eng engine.Engine
	where := "" // where the blocks run (a local model)
	switch {
	case *remote != "" && *lf.model != "":
		return usagef("give -m FILE.gguf or --remote URL, not both")
	case *remote != "":
		if *apiKey == "" && e.LookupEnv != nil {
			*apiKey, _ = e.LookupEnv("MINFER_API_KEY")
		}
		ctx, stop := interruptible()
		r, models, err := engine.Connect(ctx, *remote, *apiKey, *modelID)
		stop()
		if err != nil {
			return err
		}
		r.NoStream = *noStream
		fmt.Fprintf(e.Stderr, "%s (the server lists: %s)\n", r.Where(), strings.Join(models, ", "))
		eng = r
	default:
		if *modelID != "" || *apiKey != "" || *noStream {
			return usagef("--model, --api-key and --no-stream go with --remote URL")
		}
		s, err := lf.load(context.Background(), e, true)
		if err != nil {
			return err
		}
		defer s.Close()
		l, err := engine.NewLocal(s)
		if err != nil {
			return err
		}
		where = s.OffloadReport().Where()
		fmt.Fprintf(e.Stderr, "%s · %s · context %d · template: %s\n", s.Info.Name, where, s.NCtxLen(), l.Source)
		l.OnTemplateFallback = func(err error, family string) {
			fmt.Fprintf(e.Stderr, "%v\nContinuing this chat with the built-in %s template.\n", err, family)
		}
		eng = l
	}
	return chatLoop(e, eng, *system, opts, where)
}

// chatLoop is the terminal chat over any engine.
func chatLoop(e Env, eng engine.Engine, system string, opts chat.GenOptions, where string) error {
	fmt.Fprintf(e.Stderr, "Type a message and press Enter. Ctrl-C stops a reply; Ctrl-D or /exit quits; /reset starts over.\n")
	var msgs []chat.Message
	if system != "" {
		msgs = append(msgs, chat.Message{Role: "system", Content: system})
	}
	kept := len(msgs) // what /reset keeps: the system prompt
	in := bufio.NewScanner(e.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for {
		fmt.Fprint(e.Stdout, "> ")
		if !in.Scan() {
			fmt.Fprintln(e.Stdout)
			return in.Err()
		}
		line := strings.TrimSpace(in.Text())
		switch line {
		case "":
			continue
		case "/exit", "/quit":
			return nil
		case "/reset":
			msgs = msgs[:kept]
			if err := eng.Reset(); err != nil {
				return err
			}
			continue
		}
		msgs = append(msgs, chat.Message{Role: "user", Content: line})
		ctx, stop := interruptible()
		reply, st, err := eng.Reply(ctx, msgs, opts, func(ev chat.Event) { fmt.Fprint(e.Stdout, ev.Text) })
		stop()
		fmt.Fprintln(e.Stdout)
		if errors.Is(err, engine.ErrInterrupted) {
			// Keep what arrived, marked, so the next turn sees it.
			fmt.Fprintf(e.Stderr, "[interrupted: %v; the text so far is kept]\n", err)
			msgs = append(msgs, chat.Message{Role: "assistant", Content: reply})
			continue
		}
		if err != nil {
			fmt.Fprintf(e.Stderr, "error: %v\n", err)
			msgs = msgs[:len(msgs)-1]
			continue
		}
		msgs = append(msgs, chat.Message{Role: "assistant", Content: reply})
		if st.DroppedMessages > 0 {
			fmt.Fprintf(e.Stderr, "[dropped the %d oldest messages to fit the context]\n", st.DroppedMessages)
		}
		printStats(e.Stderr, st, where)
	}
}

func runTokenize(e Env, args []string) error {
	fs := newFlags("tokenize", "-m FILE.gguf [--no-bos] [--special] [--ids] TEXT", e)
	model := fs.String("m", "", "model or vocab file (.gguf)")
	noBOS := fs.Bool("no-bos", false, "do not add BOS (or other special tokens the model adds)")
	special := fs.Bool("special", false, "parse special-token text such as <|im_start|>")
	ids := fs.Bool("ids", false, "TEXT is token ids: print their text")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if *model == "" || len(pos) == 0 {
		fs.Usage()
		return usagef("need -m FILE.gguf and TEXT")
	}
	text := strings.Join(pos, " ")
	tok, err := core.LoadTokenizer(*model)
	if err != nil {
		return err
	}
	if *ids {
		out, bad, ok := tokenIDs(text, int64(tok.VocabSize()))
		if !ok {
			return usagef("%q is not a token id of this vocabulary (0..%d)", bad, tok.VocabSize()-1)
		}
		fmt.Fprintln(e.Stdout, tok.Decode(out))
		return nil
	}
	toks, err := tok.Encode(text, !*noBOS, *special)
	if err != nil {
		return err
	}
	parts := make([]string, len(toks))
	for i, t := range toks {
		parts[i] = strconv.Itoa(int(t))
	}
	fmt.Fprintln(e.Stdout, strings.Join(parts, " "))
	return nil
}
