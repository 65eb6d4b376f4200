"""The agent benchmark's Python side: the same scripted task, run by the OpenAI Agents SDK
(`openai-agents`) against the same fake Chat Completions server as our loop.

Usage: agent_bench.py BASE_URL CALLS RUNS
Prints one JSON line: {"runs": RUNS, "calls": total tool calls, "wall_s": seconds for all runs}.
The server (tests/benches/agent.rs) answers every request with a call of `add` until the
conversation holds CALLS results, then with text; it measures its own time.
"""

import asyncio
import json
import sys
import time

from agents import (
    Agent,
    ModelSettings,
    OpenAIChatCompletionsModel,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from openai import AsyncOpenAI


@function_tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def main() -> None:
    base_url, calls, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    # No traces sent anywhere: the benchmark measures the loop, not an exporter.
    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=base_url, api_key="sk-bench", max_retries=0)
    agent = Agent(
        name="bench",
        instructions="Add numbers with the tool.",
        tools=[add],
        model=OpenAIChatCompletionsModel(model="fake-model", openai_client=client),
        model_settings=ModelSettings(parallel_tool_calls=False),
    )
    # One warm-up run (imports, connection, first-call caches) left out of the timing.
    await Runner.run(agent, "go", max_turns=calls + 2)
    started = time.perf_counter()
    for _ in range(runs):
        result = await Runner.run(agent, "go", max_turns=calls + 2)
        assert result.final_output == "done", result.final_output
    wall = time.perf_counter() - started
    print(json.dumps({"runs": runs, "calls": runs * calls, "wall_s": wall}))


if __name__ == "__main__":
    asyncio.run(main())
