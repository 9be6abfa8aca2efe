# SPDX-License-Identifier: GPL-2.0-or-later
# bash completion for ftracectl: commands, each command's options (read from
# its own --help, so they never drift), session names (asked of the daemon),
# event names (read from tracefs, where the user may read it) and files.
# Installed to share/bash-completion/completions/ftracectl; plain bash can
# `source` it too: it needs nothing from the bash-completion package.

_ftracectl_sessions()
{
    local socket=("$@")
    ftracectl "${socket[@]}" --json list 2>/dev/null |
        sed -n 's/.*"name": "\([^"]*\)".*/\1/p'
}

_ftracectl_events()
{
    local cur=$1 tracing
    for tracing in /sys/kernel/tracing /sys/kernel/debug/tracing; do
        if [[ -r $tracing/available_events ]]; then
            # SYSTEM:EVENT, and SYSTEM alone for "every event of it".
            { cat "$tracing/available_events"; cut -d: -f1 "$tracing/available_events" | sort -u
              echo ftrace:print; echo ftrace:raw_data; echo ftrace; } 2>/dev/null
            return
        fi
    done
}

_ftracectl_options()
{
    local tracing name
    for tracing in /sys/kernel/tracing /sys/kernel/debug/tracing; do
        if [[ -r $tracing/options ]]; then
            for name in $(ls "$tracing/options" 2>/dev/null); do
                echo "$name"; echo "no$name"
            done
            return
        fi
    done
}

_ftracectl()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local commands="record create start stop snapshot rotate destroy save reload list status metrics recover info verify extract"
    local cmd="" i socket=()

    # The command is the first word that is not a global option (or its argument).
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
            -s|--socket) socket=(--socket "${COMP_WORDS[i+1]}"); ((i++)) ;;
            -*) ;;
            *) cmd=${COMP_WORDS[i]}; break ;;
        esac
    done

    if [[ -z $cmd ]]; then
        case $prev in
            -s|--socket) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        esac
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--socket --json --help --version" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$commands" -- "$cur"))
        fi
        return
    fi

    case $prev in
        -e|--event)
            COMPREPLY=($(compgen -W "$(_ftracectl_events "$cur")" -- "$cur"))
            return ;;
        -o|--output)
            COMPREPLY=($(compgen -f -- "$cur"))
            return ;;
        --compression)
            COMPREPLY=($(compgen -W "zstd none" -- "$cur"))
            return ;;
        -O|--option)
            COMPREPLY=($(compgen -W "$(_ftracectl_options)" -- "$cur"))
            return ;;
        --mode)
            COMPREPLY=($(compgen -W "continuous flight" -- "$cur"))
            return ;;
        --flight-backend)
            COMPREPLY=($(compgen -W "memory kernel persistent" -- "$cur"))
            return ;;
        -C|--clock)
            COMPREPLY=($(compgen -W "local global counter uptime perf mono mono_raw boot tai x86-tsc" -- "$cur"))
            return ;;
    esac

    if [[ $cur == -* ]]; then
        # Long options as the command's own --help lists them.
        COMPREPLY=($(compgen -W "$(ftracectl "$cmd" --help 2>/dev/null |
            grep -oE -- '--[a-z][a-z-]*' | sort -u)" -- "$cur"))
        return
    fi
    case $cmd in
        start|stop|snapshot|rotate|destroy|status|save)
            COMPREPLY=($(compgen -W "$(_ftracectl_sessions "${socket[@]}")" -- "$cur")) ;;
        info|verify)
            COMPREPLY=($(compgen -f -X '!*.dat' -- "$cur") $(compgen -d -- "$cur")) ;;
        extract)
            # A session (the daemon says where its files are) or files.
            COMPREPLY=($(compgen -W "$(_ftracectl_sessions "${socket[@]}")" -- "$cur")
                       $(compgen -f -X '!*.dat' -- "$cur") $(compgen -d -- "$cur")) ;;
        recover|--state-dir)
            COMPREPLY=($(compgen -d -- "$cur")) ;;
    esac
}

complete -F _ftracectl ftracectl
