#!/usr/bin/env bash
# Builds Minfer, runs it under Xvfb and saves PNG screenshots of the plan
# view (over budget, with its refusal dialog; a failed device query; a
# plan that fits), a chat with a streamed reply and the empty state, in
# Fyne's light and dark themes.
#
#   ui/scripts/screenshot.sh [OUTDIR] [MODEL.gguf]
#
# OUTDIR defaults to /tmp/minfer-shots; MODEL to the shared stories260K test
# model. Needs Xvfb, xdotool and ImageMagick's import. The message is typed
# with xdotool (real key events into the focused input; Enter sends), the
# load is started with Ctrl+L. No test hook is involved. The GPU is the
# MINFER_FAKE_DEVICE simulation unless the caller sets that variable.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-/tmp/minfer-shots}
model=${2:-$root/testdata/models/stories260K.gguf}
prompt=${MINFER_SHOT_PROMPT:-Once upon a time}

for tool in Xvfb xdotool import; do
	command -v "$tool" >/dev/null || { echo "screenshot.sh: $tool is not installed" >&2; exit 1; }
done
[ -r "$model" ] || { echo "screenshot.sh: cannot read model $model" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
model=$(cd "$(dirname "$model")" && pwd)/$(basename "$model")

work=$(mktemp -d)
bin=$work/minfer
echo "building $bin"
(cd "$root" && go build -o "$bin" .)

# A throwaway config: recent models, chats and settings never touch the
# user's own.
export XDG_CONFIG_HOME=$work/config
export MINFER_CONFIG_DIR=$work/config/minfer
export MINFER_FAKE_DEVICE=${MINFER_FAKE_DEVICE:-reported:free=8192,total=16384,name=Simulated GPU}

# The first free display number.
n=90
while [ -e "/tmp/.X11-unix/X$n" ] || [ -e "/tmp/.X$n-lock" ]; do n=$((n + 1)); done
export DISPLAY=:$n
Xvfb "$DISPLAY" -screen 0 1120x780x24 -nolisten tcp >"$work/xvfb.log" 2>&1 &
xvfb=$!
app=
cleanup() {
	[ -n "$app" ] && kill "$app" 2>/dev/null || true
	kill "$xvfb" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
for _ in $(seq 50); do [ -e "/tmp/.X11-unix/X$n" ] && break; sleep 0.1; done

start() { # start [ARGS...]: runs the app and waits for its window
	"$bin" "$@" >>"$work/app.log" 2>&1 &
	app=$!
	win=
	for _ in $(seq 150); do
		win=$(xdotool search --name '^Minfer' 2>/dev/null | head -n1 || true)
		[ -n "$win" ] && break
		kill -0 "$app" 2>/dev/null || { cat "$work/app.log" >&2; exit 1; }
		sleep 0.2
	done
	[ -n "$win" ] || { echo "screenshot.sh: no window appeared" >&2; cat "$work/app.log" >&2; exit 1; }
	xdotool windowmove "$win" 0 0 2>/dev/null || true
	sleep 1.5 # first frames
	# No window manager: give the window the keyboard focus, so the XTEST
	# key events below reach it (GLFW ignores events sent with --window).
	xdotool windowfocus --sync "$win" 2>/dev/null || true
}

stop() {
	kill "$app" 2>/dev/null || true
	wait "$app" 2>/dev/null || true
	app=
}

shot() {
	import -window root "$out/$1.png"
	echo "saved $out/$1.png"
}

device=$MINFER_FAKE_DEVICE
for theme in light dark; do
	export FYNE_THEME=$theme
	# A GPU too small for this plan: every block and the output asked for
	# (auto would back off to what fits), so the budget line, red overflow
	# and readout show (stories260K's plan needs ~8 MiB).
	MINFER_GPU_LAYERS=6 MINFER_FAKE_DEVICE="reported:free=10,total=16,name=Tiny GPU" start gui "$model"
	shot "$theme-0-plan-over-budget"
	xdotool key ctrl+l # Load: refused before anything is loaded
	sleep 1
	shot "$theme-0-refusal-dialog"
	stop
	MINFER_FAKE_DEVICE=failed:ERROR_NO_PERMISSION start gui "$model"
	shot "$theme-0-device-query-dialog"
	stop
	MINFER_FAKE_DEVICE="$device" start gui "$model"
	shot "$theme-1-plan"
	xdotool key ctrl+l
	sleep 2 # stories260K loads in milliseconds; bigger models need longer
	xdotool type --delay 40 "$prompt"
	xdotool key Return
	sleep "${MINFER_SHOT_WAIT:-4}"
	shot "$theme-2-chat"
	stop
	# The empty state now lists the model under recent models.
	start
	shot "$theme-3-empty"
	stop
done
