"""What "looks like an instruction" means: ``instruction_in(text)`` finds a line of data (a tool's result)
that tries to steer the model reading it, for the approval panel's provenance line ("after reading …").

Measured on a labelled corpus of injection-style lines and ordinary data lines (``tests/agent/
provenance_corpus``, ``benchmarks/provenance.py``). A line counts when it carries

- a **strong** sign on its own: an override of what the model was told ("ignore all previous
  instructions", in several languages), a chat template's role token (``<|im_start|>``, ``[INST]``,
  ``<<SYS>>``), a change of identity ("you are now …", "developer mode"), words addressed to the model
  ("note to the AI", "assistant, please …"), hiding from the person ("do not tell the user", "without
  asking for approval", "before you answer"), a claim that the person already allowed it, an agent's tool
  called by name (``git__git_push``, ``run_python``) or a destructive function called, secrets sent or
  shown, a shell command that destroys or downloads and runs, "decode this and follow it", or a hidden
  HTML/Markdown comment that speaks to the model; or
- a **weaker** sign — a role marker (``SYSTEM:``, ``Assistant:``), urgency (``URGENT:``, "immediately"),
  an authority claim ("authorized by IT"), the end of a document or tool output — together with an action
  on the session or the outside world (call, run, delete, push, send, export, reveal …).

Ordinary data often has imperatives ("Run `make test`", "Ignore rows where region is null", "Call flush()
before closing") and role-like words in logs (``ERROR system: disk full``): neither alone counts.

Text is read as a reader sees it: compatibility forms folded (full-width, mathematical and circled letters),
format characters dropped, Latin look-alikes from other scripts (Cyrillic ``а``, Greek ``ο``) read as Latin;
and, when it shows signs of it, de-obfuscated: leetspeak (``1gn0r3``), letters spaced or dotted apart
(``i g n o r e``, ``S.Y.S.T.E.M``), words cut with hyphens.

Cost: every tool result passes here, so a sign is tried only where one of its anchors occurs (found with
``str.find``), and only in a text that holds the anchor's word: most signs of most texts cost one set lookup
(``benchmarks/provenance.py`` measures the microseconds per result).
"""

from __future__ import annotations

import functools
import re
import unicodedata

# -- reading as a reader sees it -----------------------------------------------------------------------------
# Latin look-alikes in other scripts (Cyrillic, Greek, dotless i), after NFKC: what a mixed-script "іgnоrе"
# reads as. Other-language signs are matched on the text before this.
_LATIN_FROM, _LATIN_TO = "аеорсухіјѕԁһԛԝкмнтвɡɩıοαερτυνικχηϳ", "aeopcyxijsdhqwkmhtbgiioaeptuvikxnj"
_LATIN = dict(zip(_LATIN_FROM, _LATIN_TO, strict=True))
_LOOKALIKE = re.compile(f"[{_LATIN_FROM}]")
_MARKS = re.compile("[\u0300-\u036f]")  # combining marks, once letters are decomposed (NFKD)
_FORMAT = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_LEET = str.maketrans("0134578@$", "oieastbas")
_SQUEEZE = str.maketrans("0134578@$", "oieastbas", " .*_-\t")  # leet read, separators gone: a quick look
_JOINED = re.compile(r"(?<=[a-z])[.*_\-](?=[a-z])|(?<=\b[a-z]) (?=[a-z]\b)")
_SPACES = str.maketrans({c: " " for c in map(chr, range(128)) if not c.isalpha()})  # words, quickly


def _views(text: str) -> tuple[str, str]:
    """The text folded for the other-language signs, and read as Latin for the rest (the same for ASCII);
    each after a newline, so that the first line starts like every other."""
    if text.isascii():
        low = "\n" + text.lower()
        return low, low
    folded = "\n" + unicodedata.normalize("NFKC", text).lower()
    if _FORMAT.search(folded):
        folded = _FORMAT.sub("", folded)
    latin = _MARKS.sub("", unicodedata.normalize("NFKD", folded))  # "i̇gnore" (İ lowered) reads "ignore"
    if _LOOKALIKE.search(latin) is not None:
        latin = _LOOKALIKE.sub(lambda m: _LATIN[m.group()], latin)
    return folded, latin


def _words(view: str) -> set[str]:
    """The ASCII words of ``view`` (two C passes for an ASCII text)."""
    if not view.isascii():
        view = view.encode("ascii", "replace").decode("ascii")
    return set(view.translate(_SPACES).split())


# -- the signs -----------------------------------------------------------------------------------------------
_WORD = re.compile(r"[a-z]+")


class _Sign:
    """One sign: ``regex``, tried only where one of its ``anchors`` (literals it starts with) occurs — found
    with ``str.find`` — and, for an anchor made of letters, only in a text that holds its longest word (or
    one of the sign's ``gate`` words, when it has them); an anchor of symbols (``<!--``) is looked for with
    ``in``. Most signs of most texts cost nothing but a set lookup (``_first``)."""

    __slots__ = ("_compiled", "anchors", "keys", "pattern")

    def __init__(
        self,
        anchors: str | tuple[str, ...],
        regex: str,
        gate: str = "",
        keys: list[tuple[str, str]] | None = None,
    ) -> None:
        self.anchors = tuple(anchors.split("|")) if isinstance(anchors, str) else anchors
        self.pattern = regex
        self._compiled: re.Pattern[str] | None = None
        # (word or symbol, anchor): the anchor is tried when the text holds the word (or the symbol)
        if keys is not None:
            self.keys = keys
        elif gate:
            self.keys = [(word, anchor) for word in gate.split("|") for anchor in self.anchors]
        else:
            self.keys = [(max(_WORD.findall(a), key=len) if _wordy(a) else a, a) for a in self.anchors]

    @property
    def regex(self) -> re.Pattern[str]:
        """Compiled when first needed: a process that never meets the sign never pays for it."""
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, re.M)
        return self._compiled

    def starts(self, view: str, anchors: list[str], before: int) -> list[int]:
        """Where it matches in ``view`` at one of ``anchors``, before ``before``, in no particular order."""
        found = []
        regex = self.regex
        for anchor in anchors:
            end = before + len(anchor) - 1  # (an anchor that starts before ``before``)
            at = view.find(anchor, 0, end)
            while at >= 0:
                if regex.match(view, at):
                    found.append(at + 1 if view[at] == "\n" else at)  # (a match from a line's start)
                at = view.find(anchor, at + 1, end)
        return found


def _wordy(anchor: str) -> bool:
    return anchor.replace(" ", "").replace("-", "").isalpha()


_W = r"[^\n]{0,60}?"  # what may stand between two parts of a sign, on one line
_AGENT = r"(?:ai|a\.i\.|llm|gpt|claude|copilot|chatbot|assistant|agent|model|bot|language model)"
_AGENTS = "ai|a.i.|llm|gpt|chatgpt|gemini|claude|copilot|chatbot|assistant|agent|model|bot|language model"
_SECRET = (
    r"(?:passwords?|passwd|pass-word|credentials?|api[ _-]?keys?|(?<![a-z])keys?\b|(?<![a-z])tokens?\b|"
    r"(?<![a-z])secrets?|private key|ssh|id_rsa|\.env\b|environment variables?|os\.environ|"
    r"/etc/(?:passwd|shadow)|system prompt|hidden (?:instructions|prompt)|"
    r"(?:your|the) (?:instructions|configuration|prompt))"
)
_BULK = (
    r"(?:(?:all|every|whole|entire|full)\s+(?:\w+\s+){0,2}?(?:tables?|data\w*|frames?|rows|results|session|"
    r"notebooks?|history|variables|database|emails?|email address\w*|files?|records)|"
    r"session (?:history|variables)|customer list|the (?:data|dataframe|notebook|database)\b|\bdf\b|\.to_csv)"
)
_DESTINATION = (
    r"(?:https?://|\b[\w.+-]+@[\w-]+\.[\w.]+|webhook|pastebin|external|outside|public remote|\bremote\b|"
    r"the (?:address|link|url|server|endpoint) below)"
)
_DANGERS = (
    "delete|drop|remove|wipe|erase|truncate|push|deploy|transfer|send|post|upload|email|reset|kill|grant|rm"
)
_DANGER = f"(?:{_DANGERS})"
_ROLES = "system|assistant|developer|administrator|admin|human|user|sys"
# what may stand before a role marker: a line's start (and a list's, a heading's, a quote's), a tag's end
_ROLE_AFTER = (
    *("\n**", "\n##", "\n</", "\n> ", "\n ", "\n#", "\n[", "\n*", "\n-", '\n"', "\n<", "\n"),
    *("> ", "] ", ">", "]"),
)
_TOOL_NAMES = "propose_code|run_python|eval_expr|query_sql|get_repr|get_doc|get_dir|get_type|list_globals"
_CALLS = "call|calling|invoke|invoking|run|running|execute|use|trigger|make a tool call"
_CALL = r"\b(?:call|calling|invoke|invoking|run|running|execute|use|trigger|make a tool call:?)\b"
_SEND = (
    "send|post|upload|email|e-mail|forward|paste|copy|attach|append|add|include|share|transmit|reveal|"
    "disclose|print|output|show|dump|report|encode|read|list|put"
)

_STRONG = [
    # what the model was told, overridden
    _Sign(
        "ignore|ignoring|disregard|forget|override|bypass|discard|set aside|never mind|skip",
        rf"\b(?:ignore|ignoring|disregard|forget|override|bypass|discard|set aside|never mind|skip)\b{_W}"
        r"(?:instructions?|prompts?|rules|guidelines|guidance|directions|directives|orders|context|programming|"
        r"everything (?:above|before|else|you)|(?:all|the|everything) (?:of )?(?:the )?above|"
        r"what (?:you|i) (?:were|was) told|(?:your|the) (?:task|role)\b|the user'?s? (?:question|request)|"
        r"safety)",
    ),
    _Sign(
        "instruction|rules|guidelines",
        r"\b(?:instructions?|rules|guidelines) (?:above|before) (?:no longer|do not|don'?t) apply",
    ),
    _Sign(
        "instruction|task|system prompt|orders|directive",
        r"(?:(?<=\bnew )|(?<=\breal )|(?<=\bactual )|(?<=\bupdated )|(?<=\btrue ))"
        r"(?:instructions?|task|system prompt|orders|directive)\s*(?::|-|start|follow|is\b)",
    ),
    _Sign("instruction", r"(?:(?<=\bnext )|(?<=\bfollowing ))instruction\s*:"),
    _Sign("from now on", r"\bfrom now on,? (?:you|the assistant|the model|answer|respond|always|only)"),
    _Sign(
        "follow|obey|listen",
        r"(?:(?<=\bdo not )|(?<=\bdon't )|(?<=\bdont )|(?<=\bnever ))(?:follow|obey|listen to) (?:the|your) "
        r"(?:system|user|previous|original)"
        r"|\b(?:follow|obey) (?:only )?(?:these|this|the following|my) "
        r"(?:instructions?|orders|note|steps|row|cell)"
        r"|\bfollow (?:these|the following) (?:instructions|steps)\s*:|\b(?:obey|follow) (?:it|them|this)\b",
    ),
    _Sign("pretend", r"\bpretend (?:that |to be |the |you )"),
    _Sign(
        "treat",
        r"\btreat (?:this|the following) (?:row|cell|text|note) as (?:your|the|a) (?:real |new )?"
        r"(?:prompt|instructions?)",
    ),
    # another identity
    _Sign(
        "you are|you're|you will be|mode|do anything now|restriction|restricciones",
        r"\byou are (?:now|no longer)\b|\byou(?:'re| are) (?:in|now in) \w+ mode\b|"
        r"(?:(?<=developer )|(?<=maintenance )|(?<=god )|(?<=jailbreak )|(?<=dan ))mode\b|"
        r"\byou (?:are|will be) dan\b|"
        r"\bdo anything now\b|(?:(?<=without any )|(?<=\bno )|(?<=\bsin ))restric(?:tions|ciones)\b",
    ),
    # chat templates' role tokens, and tool-output tags closed early
    _Sign(
        ("<|", "[inst", "[/inst", "<<sys", "<</sys", "<start_of_turn>", "<end_of_turn>"),
        r"<\|(?:im_start|im_end|endoftext|system|user|assistant)\|>|\[/?inst\]|<</?sys>>|"
        r"<(?:start|end)_of_turn>",
    ),
    _Sign(
        (
            "<system",
            "</system",
            "<function_",
            "</function_",
            "<tool_",
            "</tool_",
            "<observation",
            "</observation",
            "<instructions",
            "</instructions",
            "</data",
            "[/data",
        ),
        r"(?:<|</|\[/)(?:system|system-reminder|function_calls|function_results|tool_result|tool_output|"
        r"observation|instructions|data)>",
    ),
    _Sign(
        ("[end ", "[begin "),
        r"\[(?:end|begin) (?:data|instructions?)\]",
        gate="data|instruction|instructions",
    ),
    _Sign("begin system message|begin instructions", r"\bbegin (?:system message|instructions)\b"),
    _Sign(('"role"',), r"\"role\"\s*:\s*\"(?:system|developer)\"", gate="role"),
    # addressed to the model
    _Sign(
        _AGENTS,
        rf"(?:(?<=\bnote to )|(?<=\bnote for )|(?<=\bmessage to )|(?<=\bmessage for )|(?<=\bnotice to )|"
        rf"(?<=\binstructions to )|(?<=\binstructions for )|(?<=\breminder to )|(?<=\breminder for )|"
        rf"(?<=\battention to )|(?<=\btask for )|(?<=\bnote to the )|(?<=\bnote for the )|"
        rf"(?<=\bmessage to the )|(?<=\bnotice to the )|(?<=\btask for the )|(?<=\breminder to the )|"
        rf"(?<=\binstructions for the )|(?<=\battention )|(?<=\bhey )|(?<=\bdear ))"
        rf"{_AGENT}s?\b"
        rf"|\b(?:{_AGENT}|{_AGENT} agents?)s?\s*[:,]\s*(?:please|you|now|ignore|call|run|send|do|stop|never|"
        r"always|make|use|execute|delete|reveal|print|output|forward|include|export|list|push|remove|disable|"
        r"forget)\b"
        rf"|\b{_AGENT}s? (?:reading|processing|parsing|summari[sz]ing|seeing) (?:this|these)\b"
        r"|\b(?:assistants?|models?|agents?|llms?) (?:must now|are required to|have to)\b"
        r"|(?<=\bthe )(?:ai |llm )?(?:assistant|model|agent|ai|llm)s? (?:must|should|has to|is required to|"
        r"needs? to|is to|will now)\b"
        r"|\b(?:claude|gpt|chatgpt|copilot|gemini|llm|language model)s? (?:should|must|needs? to|has to|"
        r"have to|shall|is to|will now|may not|cannot)\b"
        r"|\bai[-_ ]instructions?\b",
    ),
    _Sign("instructions for", r"\binstructions for (?:claude|gpt|the ai|the assistant|the model)\b"),
    # hiding from the person, or claiming their consent
    _Sign(
        "tell|inform|mention|alert|notify|show",
        r"(?:(?<=\bdo not )|(?<=\bdon't )|(?<=\bdont )|(?<=\bnever ))"
        r"(?:tell|inform|mention (?:this )?to|alert|notify|show) (?:the )?(?:user|human|person|owner)",
    ),
    _Sign(
        "without",
        r"\bwithout (?:telling|asking|informing|notifying|alerting) (?:the )?(?:user|human|person|owner)|"
        r"\bwithout (?:waiting for |asking for |requesting |any )?"
        r"(?:approval|confirmation|permission|asking)\b",
    ),
    _Sign(
        "before",
        r"\bbefore (?:you )?(?:answer|answering|respond|responding|reply|replying|doing anything(?: else)?|"
        r"continuing|you continue)\b|\bbefore the user notices\b",
    ),
    _Sign("you must not mention", r"\byou must not mention\b"),
    _Sign(
        "authorized|authorised|approved|allowed|consented|wants you|permits|granted|notices",
        r"(?:(?<=\bthe user )|(?<=\bthe user has )|(?<=\bthe user already )|(?<=\bthe user has already ))"
        r"(?:authori[sz]ed|approved|allowed|consented|wants you|permits|granted)|(?<=\bthe user )notices\b",
    ),
    _Sign(
        "authorized|authorised|permitted|allowed|granted|cleared",
        r"(?:(?<=\byou are )|(?<=\byou have been )|(?<=\byou were )|(?<=\byou are now ))"
        r"(?:authori[sz]ed|permitted|allowed|granted|cleared)\b",
    ),
    _Sign(
        "permission|permissions|authority|access",
        r"(?:(?<=\byou have )|(?<=\bgrant you )|(?<=\bgrants you )|(?<=\bgranted you )|(?<=\bgive you )|"
        r"(?<=\byou have full )|(?<=\bgranted you elevated )|(?<=\bgranted you full )|(?<=\byou have the ))"
        r"(?:permission|permissions|authority|access)\b",
    ),
    _Sign(
        "approve its own|bypass|disable|skip",
        r"\bapprove its own proposals\b|\b(?:bypass|disable|skip) (?:the )?"
        r"(?:approval|confirmation|all checks|"
        r"checks|safety)",
    ),
    _Sign("overrides|override", r"\boverrides? (?:their|the user'?s?|your) (?:instructions|request|rules)"),
    _Sign("read-only rule|safe to run", r"\bread-only rule does not apply\b|\bsafe to run without asking\b"),
    # a tool of an agent called by name, or a destructive function
    _Sign(
        _CALLS,
        rf"{_CALL}(?: (?:these |those |the following |all (?:the |of the |your )?)tools\b|"
        rf"(?=[^\n]{{0,90}}?[_(]){_W}"  # (a tool's name or a call has an underscore or a parenthesis)
        rf"(?:\b[a-z0-9]+__[a-z0-9_]+|\b(?:{_TOOL_NAMES})\b|\b\w*{_DANGER}\w*\s*\())",
    ),
    _Sign("is the tool", r"\bis the tool (?:you|to) (?:must |should |need to |have to )?(?:call|use|run)\b"),
    _Sign(("tool:",), r"\btool:\s*\w+\(", gate="tool"),
    _Sign("action|tool call|function call", r"\b(?:action|tool call|function call)\s*:\s*[a-z0-9_]+__"),
    # secrets sent or shown, data sent out
    _Sign("leak|exfiltrate|exfil|smuggle", r"\b(?:leak|exfiltrate|exfil|smuggle)\b"),
    _Sign(
        _SEND,
        rf"(?<!never )(?<!not )(?<!n't )\b(?:send|post|upload|e-?mail (?=it|them|this|the|all|every|to)|"
        r"forward|paste|copy|attach|append|add|include|share|transmit|reveal|disclose|print|output|show|dump|"
        rf"report|encode|read|list|put)\b{_W}{_SECRET}",
    ),
    _Sign(
        "send|post|upload|email|e-mail|forward|share|export|transmit|copy|submit",
        rf"\b(?:send|post|upload|email|e-mail|forward|share|export|transmit|copy|submit)\b"
        rf"(?:{_W}{_BULK}{_W}{_DESTINATION}|{_W}\bto {_DESTINATION}{_W}{_BULK})",
    ),
    _Sign(("![",), r"!\[[^\]\n]*\]\([^)\s]*[?&][a-z_]*=(?:\{[^}\n]*\}|\)|$)"),
    _Sign("fetch", r"\bfetch https?://\S+ and (?:do|follow|execute|run|obey)\b"),
    # a shell command that destroys, or downloads and runs
    _Sign(("rm ",), r"\brm\s+-[a-z]*[rf]", gate="rm"),
    _Sign("sudo", r"\bsudo\s"),
    _Sign("chmod", r"\bchmod\s+[0-7]{3}\b"),
    _Sign(("|",), r"\|\s*(?:ba|z)?sh\b", gate="sh|bash|zsh"),
    _Sign(("bash -c", "sh -c"), r"\b(?:ba)?sh\s+-c\b"),
    _Sign("curl|wget", r"\b(?:curl|wget)\s+(?:-\S+\s+)*https?://"),
    _Sign("powershell", r"\bpowershell\b"),
    _Sign(
        ("os.",), r"\bos\.(?:system|popen|remove|unlink|rmdir)\s*\(", gate="system|popen|remove|unlink|rmdir"
    ),
    _Sign(
        ("shutil.rmtree", "subprocess.", "__import__"),
        r"\bshutil\.rmtree\b|\bsubprocess\.\w+\s*\(|__import__\s*\(",
        gate="rmtree|subprocess|import",
    ),
    _Sign(("eval(", "exec(", "eval (", "exec ("), r"\b(?:eval|exec)\s*\(\s*[\"']", gate="eval|exec"),
    _Sign(
        "drop|truncate|delete", r"\bdrop\s+(?:table|database)\s+\w|\btruncate\s+table\b|\bdelete\s+from\s+\w"
    ),
    # encoded or reversed, to be followed
    _Sign(
        "decode|base64|rot13|backwards|reverse|reversed",
        rf"\b(?:decode|base64|rot13|backwards|reversed?)\b{_W}"
        r"\b(?:follow|obey|execute|do what|run it|act on)",
    ),
    # a comment or hidden element that speaks to the model
    _Sign(
        ("<!--",),
        r"<!--[^\n]*\b(?:ai|assistant|llm|model|claude|gpt|agent|prompt|instructions?|ignore|call|send|run|"
        r"forward|include|reveal|password|token|secret|email)\b",
    ),
    _Sign(("[//]:", "[comment]:"), r"\[(?://|comment)\]:\s*(?:#|<>)\s*\("),
    _Sign(
        ("display:", "<span hidden", "color:", "font-size:"),
        r"display:\s*none|<span hidden|color:\s*white|font-size:\s*0",
        gate="none|hidden|white|font",
    ),
]
# Weaker signs: they count with an action (``_ACTION``) on the same line.
_WEAK = [
    # who speaks: a role marker at the start of a line or of a tag's text
    _Sign(
        tuple(f"{before}{role}" for role in _ROLES.split("|") for before in _ROLE_AFTER),
        rf"(?:{'|'.join(map(re.escape, _ROLE_AFTER))})(?:{_ROLES})"
        r"(?: (?:override|message|notice|note|prompt))?"
        r"\s*(?:[:>\]]|###)",
        keys=[(role, f"{before}{role}") for role in _ROLES.split("|") for before in _ROLE_AFTER],
    ),
    _Sign(("##",), r"#{2,}\s*system", gate="system"),
    _Sign("override|notice|message|prompt", r"(?<=\bsystem )(?:override|notice|message|prompt)\b"),
    # urgency
    _Sign(
        "urgent|important|attention|critical|emergency|action required|high priority|hurry|act fast|asap|"
        "immediately|right away|do it now|time is running out|deadline|final reminder|cannot wait|now",
        r"\b(?:urgent|important|attention|critical|emergency|action required|high priority|hurry|act fast|"
        r"asap|"
        r"immediately|right away|do it now|time is running out|deadline|final reminder|cannot wait|now)\b",
    ),
    # authority
    _Sign(
        "authorized by|authorised by|on behalf of|message from the|as the security|as the admin|"
        "policy update|compliance notice|verified instruction|trusted source|per company policy|per policy|"
        "has cleared|permits you|requires you|we require you|says|permits|has granted|granted|authorized|"
        "authorised|approved|requires|cleared",
        r"\b(?:authori[sz]ed by|on behalf of|message from the|as the (?:security|admin|it)|policy update|"
        r"compliance notice|verified instruction|trusted source|per company policy|per policy|has cleared|"
        r"permits you|requires you|we require you)"
        r"|(?:(?<=owner )|(?<=administrator )|(?<=admin )|(?<=manager )|(?<=developer )|(?<=security team )|"
        r"(?<=legal )|(?<=\bit ))"
        r"(?:says|permits|has granted|granted|authori[sz]ed|approved|requires|cleared)",
    ),
    # the end of what was read
    _Sign(
        "end of|begin of|eof|===|---|```",
        r"\b(?:end|begin) of (?:data|tool output|document|context|input|file|comment)\b|\beof\b|={3,}|"
        r"-{3,}\s*end|```",
    ),
    # the model addressed
    _Sign(
        "you must|you need to|you should|you have to|you will|you are to|your next step|your new task|"
        "your task is|the next step is",
        r"\byou (?:must|need to|should|have to|will|are to)\b|\byour (?:next step|new task|task is)\b|"
        r"\bthe next step is\b",
    ),
    _Sign("thought|action", r"\b(?:thought|action)\s*:"),
]
_ACTION = re.compile(
    r"\b(?:call|calling|invoke|run|execute|use the \w+ tool|delete|drop|remove|wipe|erase|overwrite|modify|"
    r"push|deploy|disable|bypass|grant|rotate|reset|export|send|post|upload|forward|share|reveal|disclose|print|"
    r"output|leak|transfer|rm|list the|approve its|dump)\b"
)
# Overrides in other languages: the verb (ignore, forget) and its object (instructions, rules), in either
# order; each of these words starts one.
_FOREIGN_WORDS = (
    "ignor",
    "olvid",
    "oubli",
    "vergiss",
    "negeer",
    "zignoruj",
    "yok say",
    "bỏ qua",
    "игнорир",
    "забудь",
    "忽略",
    "无视",
    "無視",
    "무시",
    "تجاهل",
    "अनदेखा",
    "dimentica",
    "instruc",
    "指令",
    "指示",
    "지시",
    "निर्देश",
    "инструкц",
)
_FOREIGN = re.compile(
    r"(?:ignor|olvid|oubli|vergiss|negeer|zignoruj|yok say|bỏ qua|игнорир|забудь|忽略|无视|無視|무시|تجاهل|"
    r"अनदेखा)[^\n]{0,40}?(?:instruc|anweisung|istruzion|instruç|instructie|instrukcj|talimat|hướng dẫn|"
    r"инструкц|指令|指示|지시|تعليمات|निर्देश|règles|regeln|reglas|regole|gesagt|правил)"
    r"|(?:instruc|指令|指示|지시|निर्देश|инструкц)[^\n]{0,20}?(?:無視|无视|忽略|무시|अनदेखा|игнорир)"
    r"|(?:vergiss|oubliez|olvida|dimentica) (?:alles|tout|todo|tutto|tus|vos|tes|le tue)\b"
)
_FOREIGN_ASCII = tuple(word for word in _FOREIGN_WORDS if word.isascii())
# Words an obfuscated instruction shows once read plainly (the second reading is done only when one appears).
_UNVEILED = (
    "ignor",
    "instruc",
    "previous",
    "system",
    "password",
    "delete",
    "secret",
    "prompt",
    "rules",
    "above",
)


def instruction_in(text: str) -> str | None:
    """The first line of ``text`` that looks like an instruction to the model reading it (see the module
    docstring), from the start of the sentence that says it and trimmed for a one-line quote; else
    ``None``. Text that hides its words (``&#73;gnore``, ``Ignore%20all``, ``ignore_all_previous``,
    ``IgnoreAllPrevious``) is read again as a model would read it (``_unveiled``)."""
    found = _instruction_in(text)
    if found is None and len(text) >= 12:
        plain = _unveiled(text)
        if plain != text:
            found = _instruction_in(plain)
    return found


_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_UNDERSCORE = re.compile(r"(?<!_)_(?!_)")  # one: a space hidden; two (``git__push``) name a tool


def _unveiled(text: str) -> str:
    """``text`` with its HTML references and %XX escapes decoded (until nothing changes, a few rounds at
    most), a single ``_`` read as a space and CamelCase words apart: what a model undoes as it reads."""
    if "&" in text or "%" in text:
        import html  # only for a text with a reference or an escape
        import urllib.parse

        for _ in range(4):
            decoded = urllib.parse.unquote(html.unescape(text))
            if decoded == text:
                break
            text = decoded
    return _CAMEL.sub(" ", _UNDERSCORE.sub(" ", text))


def _instruction_in(text: str) -> str | None:
    if len(text) < 12:
        return None
    foreign, latin = _views(text)
    found = [(at, latin)] if (at := _first(latin)) is not None else []
    if (at := _foreign(foreign)) is not None:
        found.append((at, foreign))
    if not found:
        ascii_only = latin if latin.isascii() else latin.encode("ascii", "ignore").decode("ascii")
        squeezed = ascii_only.translate(_SQUEEZE)
        if any(word in squeezed and word not in latin for word in _UNVEILED):
            plain = _JOINED.sub("", latin.translate(_LEET))
            found = [(at, plain)] if (at := _first(plain)) is not None else []
    if not found:
        return None
    # the earlier line (the views have the text's lines, each after a newline of its own)
    at, view = min(found, key=lambda hit: hit[1].count("\n", 0, hit[0]))
    original = text.split("\n")[view.count("\n", 0, at) - 1]
    offset = at - (view.rfind("\n", 0, at) + 1)
    if len(original) != len(_line_at(view, at)):  # folded to another length: find the words themselves
        offset = max(original.lower().find(view[at : at + 12]), 0)
    return _quote(original[_sentence_start(original, offset) :])


def _index(signs: list[_Sign]) -> tuple[dict[str, list[tuple[int, str]]], list[tuple[str, int]]]:
    """Which anchors of which signs each word opens, and the anchors of symbols."""
    by_word: dict[str, list[tuple[int, str]]] = {}
    by_symbol = []
    for i, sign in enumerate(signs):
        for key, anchor in sign.keys:
            if not _wordy(key):
                by_symbol.append((key, i))
                continue
            for form in _forms(key):  # an anchor is found inside the longer forms of its word too
                by_word.setdefault(form, []).append((i, anchor))
    return by_word, by_symbol


@functools.cache
def _forms(word: str) -> frozenset[str]:
    """``word`` and the forms that start with it or its stem (instructions, authorised, executing)."""
    stem = word[:-1] if word.endswith("e") else word
    return frozenset(
        {word, *(word + end for end in ("s", "es", "d", "ed", "er", "ers", "ion", "ions")), stem + "ing"}
    )


_SIGNS = [*_STRONG, *_WEAK]


@functools.cache
def _tables() -> tuple[frozenset[str], dict[str, list[tuple[int, str]]], list[tuple[str, int]]]:
    """The words that open some sign, which anchors each opens, and the anchors of symbols (built with the
    first text read)."""
    by_word, by_symbol = _index(_SIGNS)
    return frozenset(by_word), by_word, by_symbol


def _first(view: str) -> int | None:
    """Where the first sign in ``view`` starts, else ``None``. A weak sign counts where its line also holds
    an action."""
    gate, by_word, by_symbol = _tables()
    todo: dict[int, list[str]] = {}
    for word in gate.intersection(_words(view)):
        for i, anchor in by_word[word]:
            todo.setdefault(i, []).append(anchor)
    for symbol, i in by_symbol:
        if symbol[0] in view and symbol in view:  # one character is found the fastest
            todo.setdefault(i, []).append(symbol)
    end = len(view) + 1
    best = end
    strong = len(_STRONG)
    for i in sorted(todo):
        sign = _SIGNS[i]
        if i < strong:
            best = min([best, *sign.starts(view, todo[i], best)])
            continue
        for at in sorted(sign.starts(view, todo[i], best)):
            if _ACTION.search(_line_at(view, at)):
                best = at
                break
    return None if best == end else best


def _foreign(view: str) -> int | None:
    """Where the first override in another language starts in ``view``, else ``None``."""
    for word in _FOREIGN_ASCII if view.isascii() else _FOREIGN_WORDS:
        at = view.find(word)
        while at >= 0:
            if _FOREIGN.match(view, at):
                return at
            at = view.find(word, at + 1)
    return None


def _line_at(view: str, at: int) -> str:
    start = view.rfind("\n", 0, at) + 1
    end = view.find("\n", at)
    return view[start : end if end >= 0 else len(view)]


_SEPARATORS = (". ", "! ", "? ", "\\n", '"', "'", "|", "\t", "-- ", "# ")


def _sentence_start(line: str, at: int) -> int:
    """Where the sentence around ``at`` starts: after the last separator before it (a sentence's end, an
    escaped newline or a quote of a repr, a table's bar, a SQL or Python comment's start)."""
    start = 0
    for sep in _SEPARATORS:
        found = line.rfind(sep, 0, at)
        if found >= 0:
            start = max(start, found + len(sep))
    return start


def _quote(line: str, limit: int = 90) -> str:
    line = " ".join(line.split()).rstrip("'\"")  # a repr's closing quote is not part of what it says
    return line if len(line) <= limit else line[: limit - 1] + "…"
