package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/core/tokenizer"
	"github.com/minfer/minfer/gguf"
)

func init() {
	register("template", "render a chat template for a conversation, exactly as the model would see it", runTemplate)
}

// runTemplate is `minfer template (-m FILE.gguf | --file T.jinja)
// --messages M.json [--tools T.json] [--add-generation-prompt] [--bos S]
// [--eos S] [--now 2024-07-26T12:00:00]`. It prints the render and nothing
// else; when the template fails it exits 1 with the template's error.
func runTemplate(e Env, args []string) error {
	fs := newFlagSet("template", "(-m FILE.gguf | --file T.jinja) --messages M.json", e)
	model := fs.String("m", "", "model whose tokenizer.chat_template to render (its BOS/EOS text are the defaults)")
	file := fs.String("file", "", "Jinja template file to render instead of a model's")
	messagesPath := fs.String("messages", "", "JSON file: an array of messages (OpenAI shape), or an object with \"messages\" (and \"tools\")")
	toolsPath := fs.String("tools", "", "JSON file: an array of tool definitions")
	genPrompt := fs.Bool("add-generation-prompt", false, "end with the header of an assistant turn")
	bos := fs.String("bos", "", "text of bos_token (default: the model's BOS token, or empty)")
	eos := fs.String("eos", "", "text of eos_token (default: the model's EOS token, or empty)")
	now := fs.String("now", "", "time for strftime_now, as 2006-01-02T15:04:05 (default: now)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if (*model == "") == (*file == "") {
		fs.Usage()
		return usagef("need exactly one of -m FILE.gguf and --file T.jinja")
	}
	if *messagesPath == "" {
		fs.Usage()
		return usagef("need --messages M.json")
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	var src, bosText, eosText string
	if *file != "" {
		b, err := os.ReadFile(*file)
		if err != nil {
			return err
		}
		src = string(b)
	} else {
		var err error
		src, bosText, eosText, err = modelTemplate(*model)
		if err != nil {
			return err
		}
	}
	if set["bos"] {
		bosText = *bos
	}
	if set["eos"] {
		eosText = *eos
	}
	msgs, tools, err := readConversation(*messagesPath, *toolsPath)
	if err != nil {
		return err
	}
	tmpl, err := chat.NewTemplate(src, bosText, eosText)
	if err != nil {
		return templateErr(err)
	}
	if *now != "" {
		at, err := time.Parse("2006-01-02T15:04:05", *now)
		if err != nil {
			return usagef("--now %q: want 2006-01-02T15:04:05", *now)
		}
		tmpl.SetClock(func() time.Time { return at })
	}
	var out string
	if tools != nil {
		out, err = tmpl.RenderWithTools(msgs, tools, *genPrompt)
	} else {
		out, err = tmpl.Render(msgs, *genPrompt)
	}
	if err != nil {
		return templateErr(err)
	}
	_, err = io.WriteString(e.Stdout, out)
	return err
}

// templateErr is the template's own failure, without our wrapping:
// raise_exception's message, or the engine's error.
func templateErr(err error) error {
	var raised *chat.RaisedError
	if errors.As(err, &raised) {
		return errors.New(raised.Message)
	}
	msg := err.Error()
	for _, p := range []string{chat.ErrTemplate.Error() + ": ", "render: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return errors.New(msg)
}

// modelTemplate reads a model's chat template and its BOS/EOS text.
func modelTemplate(path string) (src, bos, eos string, err error) {
	f, err := gguf.Open(path)
	if err != nil {
		return "", "", "", err
	}
	defer f.Close()
	src, err = f.Meta.String("tokenizer.chat_template")
	if err != nil {
		return "", "", "", fmt.Errorf("%s has no chat template: %w", path, err)
	}
	if tok, err := tokenizer.FromGGUF(&f.Meta); err == nil {
		bos, eos = tok.TokenText(tok.BOS()), tok.TokenText(tok.EOS()) // "" for no such token
	}
	return src, bos, eos, nil
}

// readConversation reads --messages (an array, or an object holding
// messages and maybe tools) and --tools.
func readConversation(messagesPath, toolsPath string) ([]chat.Message, []byte, error) {
	raw, err := os.ReadFile(messagesPath)
	if err != nil {
		return nil, nil, err
	}
	var msgs []chat.Message
	var tools []byte
	if trimmed := strings.TrimSpace(string(raw)); strings.HasPrefix(trimmed, "{") {
		var body struct {
			Messages []chat.Message  `json:"messages"`
			Tools    json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(raw, &body); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", messagesPath, err)
		}
		msgs = body.Messages
		if len(body.Tools) > 0 && string(body.Tools) != "null" {
			tools = body.Tools
		}
	} else if err := json.Unmarshal(raw, &msgs); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", messagesPath, err)
	}
	if toolsPath != "" {
		if tools, err = os.ReadFile(toolsPath); err != nil {
			return nil, nil, err
		}
	}
	return msgs, tools, nil
}
