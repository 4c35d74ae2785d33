"""The end of a training run's output: what the agent learned, in words, and what it bought.

Per task the run played: the weights version its next episode would pin, the learner of the
current operator's reading of the debriefs (tools/learning/operator_model.py) and the task's
strongest insights; for the adaptive hard phase, its win rate against the operator.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fakegang.tools.learning import experience, insights
from fakegang_env.tasks import TASK_NAMES

#: Insights shown per task (the strongest first).
SHOWN_INSIGHTS = 3


def learned_lines(memory, by_task: Mapping[str, Sequence[dict]], tactics: Mapping[str, str]):
    """Lines of the 'What the agent learned' block; `by_task` are the run's episode metrics per
    task and `tactics` each task's ring tactics in this run."""
    lines = ["What the agent learned"]
    for task in TASK_NAMES:
        played = by_task.get(task) or []
        if not played:
            continue
        version = experience.latest_version(memory, task)
        learner = version.learner or {}
        head = f"  {task}: weights v{max(version.version, 0)}"
        if version.model is not None:
            # the learner's reading exists only once the drift test has cut a regime
            since = learner.get("regime_episodes", version.n_episodes)
            moved = (
                f"{since} since the operator last changed tactics"
                if since < version.n_episodes
                else "no change of tactics detected"
            )
            head += (
                f", learner of the current operator fitted on {version.n_episodes} debriefs "
                f"({moved})"
            )
        elif version.version > 0:
            head += " (the shipped evidence model still explains the debriefs)"
        lines.append(head)
        if learner.get("insight"):
            lines.append(f"    {learner['insight']}")
        for insight in insights.active(memory, task, SHOWN_INSIGHTS):
            lines.append(f"    - {insight.text}")
        if tactics.get(task) == "adaptive":
            wins = sum(bool(m["won"]) for m in played)
            lines.append(
                f"    against the adaptive operator: {wins}/{len(played)} wins "
                f"({wins / len(played):.0%})"
            )
    return lines
