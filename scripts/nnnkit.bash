# bash completion for nnnkit. Commands and options are read from the tool's
# own --help output when completing, so they always match the installed tool.
_nnnkit()
{
	local cur prev cmd i
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}

	# Options that take a file, wherever they appear.
	case $prev in
	--plugin)
		COMPREPLY=($(compgen -f -X '!*.so' -- "$cur") $(compgen -d -- "$cur"))
		return ;;
	--input|--inputs|--labels|--output|-o|--tensors|--corpus)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	esac

	# The command: the first word that is not a shared option (or its value).
	cmd=
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--plugin) ((i++)) ;;
		-*) ;;
		*) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done

	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W '--plugin --no-default-plugins --help --version' -- "$cur"))
		else
			local cmds
			cmds=$("${COMP_WORDS[0]}" --help 2>/dev/null |
				awk '/^commands:/ { on = 1; next } on && /^$/ { exit } on { print $1 }')
			COMPREPLY=($(compgen -W "$cmds help" -- "$cur"))
		fi
		return
	fi
	if [[ $cur == -* ]]; then
		local opts
		opts=$("${COMP_WORDS[0]}" "$cmd" --help 2>/dev/null | grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
		COMPREPLY=($(compgen -W "$opts --plugin --no-default-plugins --help" -- "$cur"))
		return
	fi
	# Anything else is a file: models first.
	COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -o bashdefault -F _nnnkit nnnkit
