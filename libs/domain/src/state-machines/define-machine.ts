/**
 * Declarative state machines in the Step Functions style: a table of states, and of events that
 * each name the states they may fire from and the one state they lead to.
 *
 * The tables are the single source of truth for status changes: repositories turn an event into
 * `UPDATE … SET status = <to> WHERE id = … AND status IN (<from>)`, and the diagrams in
 * ARCHITECTURE.md are generated from the same tables (scripts/generate-state-diagrams.ts).
 */
export interface TransitionDefinition<S extends string> {
  readonly from: readonly S[];
  readonly to: S;
  /** One line for operators and the generated diagram. */
  readonly description: string;
}

export interface MachineDefinition<S extends string, E extends string> {
  /** Entity name as stored in events.entity (batch, member, phase, step, init). */
  readonly entity: string;
  readonly initial: S;
  readonly states: readonly S[];
  readonly terminal: readonly S[];
  readonly transitions: { readonly [K in E]: TransitionDefinition<S> };
}

export interface StateMachine<S extends string, E extends string> extends MachineDefinition<S, E> {
  /** The state that `event` leads to from `from`, or undefined when the table does not allow it. */
  next(from: S, event: E): S | undefined;
  /** States from which `event` may fire: the guard of the SQL UPDATE. */
  sourcesOf(event: E): readonly S[];
  isTerminal(state: S): boolean;
  isState(value: string): value is S;
}

export function defineMachine<const S extends string, const E extends string>(
  definition: MachineDefinition<S, E>,
): StateMachine<S, E> {
  assertWellFormed(definition);
  const terminal = new Set<string>(definition.terminal);
  const states = new Set<string>(definition.states);
  return {
    ...definition,
    next(from, event) {
      const transition = definition.transitions[event];
      return transition.from.includes(from) ? transition.to : undefined;
    },
    sourcesOf(event) {
      return definition.transitions[event].from;
    },
    isTerminal(state) {
      return terminal.has(state);
    },
    isState(value): value is S {
      return states.has(value);
    },
  };
}

/** A table with a typo in it must fail at import time, not at 3 a.m. during a migration. */
function assertWellFormed<S extends string, E extends string>(definition: MachineDefinition<S, E>): void {
  const known = new Set<string>(definition.states);
  const problems: string[] = [];
  if (!known.has(definition.initial)) problems.push(`initial state '${definition.initial}' is not a state`);
  for (const state of definition.terminal) {
    if (!known.has(state)) problems.push(`terminal state '${state}' is not a state`);
  }
  for (const [event, transition] of Object.entries<TransitionDefinition<S>>(definition.transitions)) {
    if (!known.has(transition.to))
      problems.push(`event '${event}' leads to unknown state '${transition.to}'`);
    for (const from of transition.from) {
      if (!known.has(from)) problems.push(`event '${event}' fires from unknown state '${from}'`);
    }
  }
  if (problems.length > 0) {
    throw new Error(`State machine '${definition.entity}' is malformed: ${problems.join("; ")}`);
  }
}
