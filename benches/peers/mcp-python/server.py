"""The fight example's tool (`fight-comparison`: two contestants in, a verdict out, the same
deterministic judge) on the official MCP Python SDK, served over streamable HTTP at
`POST /mcp` by uvicorn, answering as JSON. For scripts/bench-peers.sh's MCP route; the
versions are pinned in requirements.txt.

    python server.py [--port N] [--stateless]

`--stateless`: each request on its own (no session), as the SDK serves stateless deployments.
"""

import argparse

from pydantic import BaseModel

from mcp.server.mcpserver import MCPServer


class FightResponse(BaseModel):
    """The verdict (the extension's `fightResponse` schema)."""

    winner: str
    probability: float
    explanation: str


server = MCPServer("fight-club", version="1.0.0", log_level="WARNING")


@server.tool(
    name="fight-comparison",
    description="Determines who would win in a hypothetical fight between two contestants.",
)
def fight_comparison(a: str, b: str) -> FightResponse:
    """The contestant whose name carries more letters wins."""

    def weight(name: str) -> float:
        return float(sum(1 for c in name if c.isalnum()))

    wa, wb = weight(a), weight(b)
    winner, loser, ww, wl = (a, b, wa, wb) if wa >= wb else (b, a, wb, wa)
    probability = 0.5 if ww + wl == 0 else min(0.5 + (ww - wl) / (2 * (ww + wl)), 0.99)
    return FightResponse(
        winner=winner,
        probability=round(probability * 100) / 100,
        explanation=f"{winner} brings more to the fight than {loser}.",
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=18188)
    parser.add_argument("--stateless", action="store_true")
    args = parser.parse_args()
    server.run(
        "streamable-http",
        port=args.port,
        json_response=True,
        stateless_http=args.stateless,
    )
