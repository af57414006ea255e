// Libnnn.cs: what the differential tests (CorpusTests, FuzzTests,
// PluginTests) share: libnnn's answers from one `nnnkit testee` process for
// a whole batch of requests (docs/conformance.md, "The testee protocol"),
// problems written one way for both sides, the conformance manifests' cases,
// and the mismatches of a whole run gathered into one failure.
using System;
using System.Collections.Generic;
using System.IO;
using System.Json;
using System.Text;
using NUnit.Framework;

namespace Nnn.Tests
{
    /// <summary>Requests for libnnn's testee, sent together to one process.</summary>
    sealed class Libnnn
    {
        readonly StringBuilder lines = new StringBuilder();
        readonly string options;
        int next;

        /// <summary><paramref name="options"/>: nnnkit's global options (before `testee`). By default no
        /// plugin is loaded: the unknown-ID message names the plugins loaded, and C# registers none.</summary>
        public Libnnn(string options = "--no-default-plugins") { this.options = options; }

        /// <summary>Queues `decode FILE`; returns the request's id.</summary>
        public int Decode(string file) => Add("decode", file, null);

        /// <summary>Queues `validate FILE` (with <paramref name="inputShape"/> when not null).</summary>
        public int Validate(string file, long[] inputShape = null) => Add("validate", file, inputShape);

        int Add(string op, string file, long[] shape)
        {
            int id = ++next;
            lines.Append("{\"id\": ").Append(id).Append(", \"op\": \"").Append(op).Append("\", \"file\": ")
                 .Append(new JsonPrimitive(file).ToString());
            if (shape != null)
                lines.Append(", \"input_shape\": [").Append(string.Join(", ", shape)).Append(']');
            lines.Append("}\n");
            return id;
        }

        /// <summary>Runs one testee over every queued request: the answers by id. <paramref name="ours"/>:
        /// the C# testee (nnn-cs testee) instead, to compare with libnnn's.</summary>
        public Dictionary<long, JsonObject> Answers(bool ours = false)
        {
            byte[] input = Encoding.UTF8.GetBytes(lines.ToString());
            Ran r = ours ? Tree.Tool_("testee", input) : Tree.Run(Tree.Nnnkit, (options + " testee").Trim(), input);
            Assert.AreEqual(0, r.Exit, (ours ? "nnn-cs" : "nnnkit") + " testee: " + r.Err);
            var answers = new Dictionary<long, JsonObject>();
            foreach (string line in r.Out.Split('\n'))
                if (line.Length > 0)
                {
                    var a = (JsonObject)JsonValue.Parse(line);
                    answers[(long)a["id"]] = a;
                }
            Assert.AreEqual(next, answers.Count, "nnnkit testee answered " + answers.Count + " of " + next + " requests");
            return answers;
        }

        /// <summary>An answer's problems, one line each (<see cref="Line(Problem)"/>'s form); none when ok.
        /// <paramref name="firstOnly"/>: the top problem alone (decode's: the decoder stops there).</summary>
        public static List<string> Problems(JsonObject a, bool firstOnly = false)
        {
            var list = new List<string>();
            if ((bool)a["ok"])
                return list;
            if (firstOnly || !a.ContainsKey("problems"))
                list.Add(Line(a));
            else
                foreach (JsonObject p in (JsonArray)a["problems"])
                    list.Add(Line(p));
            return list;
        }

        static string Line(JsonObject p)
        {
            JsonValue off = p["offset"];
            return Line(Str(p["code"]), Str(p["path"]) ?? "(null)", (object)off == null ? -1 : (long)off, Str(p["message"]));
        }

        static string Str(JsonValue v) => (object)v == null ? null : (string)v;

        /// <summary>One problem: code, path, offset (none: -1) and message, as both sides are compared.</summary>
        public static string Line(Problem p) => Line(p.Code.ToString(), p.Path, p.Offset, p.Message);

        static string Line(string code, string path, long offset, string message) =>
            code + " " + (path == "" ? "(file)" : path) + " @" + (offset < 0 ? "-" : offset.ToString()) + ": " + message;

        /// <summary>C#'s problems as lines.</summary>
        public static List<string> Lines(IEnumerable<Problem> problems)
        {
            var list = new List<string>();
            foreach (Problem p in problems)
                list.Add(Line(p));
            return list;
        }

        /// <summary>What C#'s strict decoder says of <paramref name="bytes"/>: no line (accepted) or its problem;
        /// an exception that is no NnnException is a line of its own, which libnnn never gives.</summary>
        public static List<string> CsDecode(byte[] bytes, Registry registry = null)
        {
            try
            {
                Model.Read(bytes, registry);
                return new List<string>();
            }
            catch (NnnException e)
            {
                return new List<string> { Line(e.Problem) };
            }
            catch (Exception e)
            {
                return new List<string> { "C# threw " + e.GetType().Name + ": " + e.Message };
            }
        }

        /// <summary>C#'s every problem of <paramref name="bytes"/> (libnnn's validate: decoding goes on past
        /// what leaves the framing intact, then the rules and shapes).</summary>
        public static List<string> CsValidate(byte[] bytes, long[] inputShape, Registry registry = null)
        {
            try
            {
                return Lines(Model.Check(bytes, inputShape, registry));
            }
            catch (Exception e)
            {
                return new List<string> { "C# threw " + e.GetType().Name + ": " + e.Message };
            }
        }
    }

    /// <summary>A conformance corpus (build/conformance, or a plugin's) and its cases, from its manifest.</summary>
    static class Manifest
    {
        public static List<JsonObject> Cases(string corpus)
        {
            string path = Path.Combine(corpus, "manifest.json");
            if (!File.Exists(path))
                Assert.Fail(path + " is missing: run the tests with make test-csharp, which makes it");
            var list = new List<JsonObject>();
            foreach (JsonObject c in (JsonArray)((JsonObject)JsonValue.Parse(File.ReadAllText(path)))["cases"])
                list.Add(c);
            Assert.IsNotEmpty(list, path + " has no case");
            return list;
        }

        public static string File_(string corpus, JsonObject c) => Path.Combine(corpus, (string)c["file"]);

        public static string Id(JsonObject c) => (string)c["id"];

        public static bool Valid(JsonObject c) => (string)c["kind"] == "valid";

        /// <summary>A valid case's input_shape (validated with it, as the kit's runners do); else null.</summary>
        public static long[] Shape(JsonObject c)
        {
            if (!Valid(c) || c["input_shape"] == null)
                return null;
            var a = (JsonArray)c["input_shape"];
            var s = new long[a.Count];
            for (int i = 0; i < s.Length; i++)
                s[i] = (long)a[i];
            return s;
        }
    }

    /// <summary>Every mismatch of a run, reported together: the first 20 and how many.</summary>
    sealed class Mismatches
    {
        readonly List<string> all = new List<string>();

        public int Count => all.Count;

        public void Add(string what) => all.Add(what);

        /// <summary>Adds a mismatch when <paramref name="want"/> (libnnn's) and <paramref name="got"/> (C#'s) differ.</summary>
        public void Same(string what, List<string> want, List<string> got)
        {
            if (string.Join("\n", want) == string.Join("\n", got))
                return;
            Add(what + "\n    libnnn: " + Show(want) + "\n    C#:     " + Show(got));
        }

        static string Show(List<string> lines) => lines.Count == 0 ? "(accepted)" : string.Join("\n            ", lines);

        /// <summary>Fails with every mismatch (the first 20 shown) out of <paramref name="checks"/>.</summary>
        public void AssertNone(string checks)
        {
            if (all.Count == 0)
                return;
            var b = new StringBuilder();
            b.Append(all.Count).Append(" mismatches, ").Append(checks).Append(":\n");
            for (int i = 0; i < all.Count && i < 20; i++)
                b.Append("  ").Append(all[i]).Append('\n');
            if (all.Count > 20)
                b.Append("  ... and ").Append(all.Count - 20).Append(" more\n");
            Assert.Fail(b.ToString());
        }
    }
}
