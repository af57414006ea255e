// Probe.cs: framing a file past IDs nothing provides (a port of
// runtime/codec/probe.c). Layers carry no length, so nothing after an ID no
// registered type provides can be read with certainty; the probe searches for
// the lengths of the unknown elements under which the rest of the file
// decodes exactly to its end, to name every unknown ID of the file once, as
// libnnn's validate does. Each attempt runs the generated decoder with a
// cursor whose unknown IDs take the current guesses' bytes.
using System;
using System.Collections.Generic;
using System.Text;

namespace Nnn
{
    /// <summary>The search for a framing past unknown IDs (called by the generated Check).</summary>
    static class Probe
    {
        // As probe.c: a budget of attempts, and at most WorkMin + WorkPerByte bytes per byte of the
        // file decoded in all (each attempt counted as Attempt bytes more): an extra, not a promise.
        const int Budget = 20000;
        const long WorkMin = 1L << 20, WorkPerByte = 1, Attempt = 64;
        const int Max = 16;

        struct Hit
        {
            public ExtKind Kind;
            public long Id, At;
            public string Path;
        }

        sealed class State
        {
            public readonly long[] Guess = new long[Max]; // bytes each unknown element takes
            public int NGuess;
            public readonly Hit[] Hits = new Hit[Max];
            public int NHits;
            public int Applied;     // guesses whose bytes were skipped in this attempt, in order
            public int MaxDistinct; // framings with more distinct unknown IDs are refused
            public bool Pruned;     // this attempt met one distinct ID too many
            public int BudgetLeft = Budget;
            public long Work, MaxWork;

            /// <summary>Distinct unknown IDs among the hits so far, (kind, id) counted too.</summary>
            int DistinctWith(ExtKind k, long id)
            {
                int distinct = 1;
                for (int i = 0; i < NHits; i++)
                {
                    bool again = false;
                    for (int j = 0; j < i; j++)
                        again |= Hits[j].Kind == Hits[i].Kind && Hits[j].Id == Hits[i].Id;
                    if (!again && !(Hits[i].Kind == k && Hits[i].Id == id))
                        distinct++;
                }
                return distinct;
            }

            /// <summary>Notes an unknown ID; with a guess for it, a type whose fields take the guess's bytes.</summary>
            public PluginType Find(Cursor c, ExtKind k, long id)
            {
                if (NHits == Max)
                    return null;
                if (DistinctWith(k, id) > MaxDistinct)
                {
                    Pruned = true;
                    return null;
                }
                Hits[NHits] = new Hit { Kind = k, Id = id, At = c.Pos - 1, Path = c.Path + ".id" };
                int which = NHits++;
                if (NHits > NGuess)
                    return null;
                return new PluginType
                {
                    Kind = k, Id = id, Name = "unknown", Plugin = "probe",
                    Decode = cur =>
                    {
                        cur.Skip(Guess[which]);
                        Applied = which + 1;
                        return null;
                    },
                };
            }
        }

        /// <summary>After a decode of <paramref name="bytes"/> stopped at an unknown ID: adds to
        /// <paramref name="problems"/> one E_UNKNOWN_ID problem for each further distinct unknown ID that
        /// a framing of the file reveals (none when no framing is found within the budget).
        /// <paramref name="decode"/> decodes a whole file at a cursor (the end checked too);
        /// <paramref name="validate"/> gives a decoded model's problems.</summary>
        public static void Unknowns<T>(byte[] bytes, Registry registry, List<Problem> problems,
                                       Func<Cursor, T> decode, Func<T, IList<Problem>> validate)
        {
            var p = new State { MaxWork = WorkMin + WorkPerByte * bytes.LongLength };
            bool found = false;
            // Fewest distinct unknown IDs first: a framing that needs one more invented ID is
            // less likely than one that reuses those already seen.
            for (p.MaxDistinct = 1; !found && p.MaxDistinct <= Max && p.BudgetLeft > 0 && p.Work < p.MaxWork; p.MaxDistinct++)
                found = Search(bytes, registry, p, decode, validate);
            if (found)
                Report(p, problems);
        }

        /// <summary>One attempt under the current guesses: its status (E_SHAPE for a framing that
        /// decodes but is not plausible).</summary>
        static Status AttemptOnce<T>(byte[] bytes, Registry registry, State p, Func<Cursor, T> decode,
                                     Func<T, IList<Problem>> validate)
        {
            p.NHits = p.Applied = 0;
            p.Pruned = false;
            var c = new Cursor(bytes, registry) { Unknown = p.Find };
            Status st;
            try
            {
                st = Plausible(validate(decode(c))) ? Status.OK : Status.E_SHAPE;
            }
            catch (NnnException e)
            {
                st = e.Code;
            }
            p.Work += c.Pos + Attempt;
            return st;
        }

        /// <summary>A framing is only believed when every layer it reads passes every rule but the
        /// parameter count (the unknown layers may hold tensors).</summary>
        static bool Plausible(IList<Problem> found)
        {
            foreach (Problem q in found)
                if (q.Code != Status.E_PARAM_COUNT)
                    return false;
            return true;
        }

        /// <summary>One depth-first search for framings with at most MaxDistinct distinct unknown
        /// IDs, shortest lengths first. True when one was found.</summary>
        static bool Search<T>(byte[] bytes, Registry registry, State p, Func<Cursor, T> decode,
                              Func<T, IList<Problem>> validate)
        {
            p.NGuess = 0;
            for (; p.BudgetLeft > 0 && p.Work < p.MaxWork; p.BudgetLeft--)
            {
                Status st = AttemptOnce(bytes, registry, p, decode, validate);
                if (st == Status.OK)
                    return true;
                if (st == Status.E_UNKNOWN_ID && !p.Pruned && p.NHits > p.NGuess)
                {
                    if (p.NGuess == Max)
                        return false;
                    p.Guess[p.NGuess++] = 0; // one more unknown: try its shortest length
                    continue;
                }
                // A wrong guess: the failure came after the last guess applied (one that ran past
                // the end was not applied), so drop the guesses after it and lengthen it.
                p.NGuess = Math.Min(p.Applied, p.NGuess);
                if (p.NGuess == 0)
                    return false;
                p.Guess[p.NGuess - 1]++;
            }
            return false;
        }

        /// <summary>One problem for each distinct unknown ID the framing found past the first.</summary>
        static void Report(State p, List<Problem> problems)
        {
            for (int i = 1; i < p.NHits; i++)
            {
                bool seen = false;
                for (int j = 0; j < i; j++)
                    seen |= p.Hits[j].Kind == p.Hits[i].Kind && p.Hits[j].Id == p.Hits[i].Id;
                if (seen)
                    continue;
                var lens = new StringBuilder();
                for (int j = 0; j < i; j++)
                    lens.Append(j == 0 ? "" : j + 1 == i ? " and " : ", ").Append(CFormat.D(p.Guess[j]));
                // probe.c's buffer holds 159 characters
                string l = lens.Length > 159 ? lens.ToString(0, 159) : lens.ToString();
                problems.Add(new Problem(Status.E_UNKNOWN_ID, p.Hits[i].Path, p.Hits[i].At,
                    (p.Hits[i].Kind == ExtKind.Layer ? "layer" : "activation") + " ID " + CFormat.D(p.Hits[i].Id)
                    + " is not defined either, and no loaded plugin provides it (found by framing the rest of the file, "
                    + "assuming the fields of the unknown IDs before it take " + l
                    + " bytes: a guess, since nothing after an unknown ID is certain)"));
            }
        }
    }
}
