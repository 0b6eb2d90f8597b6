"""llama-cpp-python's OpenAI-compatible server with one more chat format, `chatml-tools`, for
a small model that calls tools (tests/model/tools.rs): llama-cpp-python 0.3.36's
`chatml-function-calling` with three changes.

- When the last message is the caller's and tools are offered (tool_choice "auto"), the model
  calls a tool: its first step may only name a function (small models otherwise take the
  handler's `message:` branch, whose grammar lets them write nothing useful), and one more
  system message says what each function is for (the handler's template shows each
  function's parameters, not its description).
- When the last message is a tool's result, the model answers in text, no tools offered (the
  handler's `message:` branch cannot write a text answer while tools are offered).
- An assistant message without `content` (a turn that only called tools, as rig sends it) is
  given an empty one: the handler's template reads `content` of every message.

Usage: python serve_tools.py [llama_cpp.server flags] --chat_format chatml-tools
"""

import runpy
import sys

from llama_cpp import llama_chat_format as formats
from llama_cpp import llama_grammar

base = formats.get_chat_completion_handler("chatml-function-calling")


def with_content(messages):
    """The messages, each with a `content` (empty where it had none)."""
    return [m if m.get("content") is not None else {**m, "content": ""} for m in messages]


@formats.register_chat_completion_handler("chatml-tools")
def chatml_tools(llama, messages, tools=None, tool_choice=None, **kwargs):
    messages = with_content(messages)
    if not tools or tool_choice not in (None, "auto"):
        return base(llama=llama, messages=messages, tools=tools, tool_choice=tool_choice, **kwargs)
    if messages and messages[-1]["role"] == "tool":
        return base(llama=llama, messages=messages, tools=None, tool_choice=None, **kwargs)
    about = "\n".join(
        f'functions.{t["function"]["name"]}: {t["function"].get("description", "")}' for t in tools
    )
    messages = [{"role": "system", "content": "What the functions do:\n" + about}] + messages
    names = " | ".join(f'"functions.{t["function"]["name"]}:"' for t in tools)
    function_only = llama_grammar.LlamaGrammar.from_string(f"root ::= {names}\n", verbose=llama.verbose)
    complete = llama.create_completion

    def create_completion(**request):
        # The handler's first step (which function, or `message`) stops at ":".
        if request.get("stop") == [":"]:
            request["grammar"] = function_only
        return complete(**request)

    llama.create_completion = create_completion
    try:
        return base(llama=llama, messages=messages, tools=tools, tool_choice="auto", **kwargs)
    finally:
        del llama.create_completion


sys.argv[0] = "llama_cpp.server"
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
