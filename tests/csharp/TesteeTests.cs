// TesteeTests.cs: `nnn-cs testee` answers every request it cannot serve as
// `nnnkit testee` (libnnn, the reference) does: the same lines sent to
// both, each answer the same id, ok, code, path and offset (null), and
// "unsupported" where libnnn's has it; blank lines unanswered; hello.
using System;
using System.Collections.Generic;
using System.IO;
using System.Json;
using System.Text;
using NUnit.Framework;

namespace Nnn.Tests
{
    [TestFixture]
    public sealed class TesteeTests
    {
        /// <summary>The answers of <paramref name="testee"/> (ours or nnnkit's) to <paramref name="input"/>.</summary>
        static List<JsonObject> Answers(bool ours, byte[] input)
        {
            Ran r = ours ? Tree.Tool_("testee", input) : Tree.Run(Tree.Nnnkit, "testee", input);
            Assert.AreEqual(0, r.Exit, (ours ? "nnn-cs" : "nnnkit") + " testee: " + r);
            var list = new List<JsonObject>();
            foreach (string line in r.Out.Split('\n'))
                if (line.Length > 0)
                    list.Add((JsonObject)JsonValue.Parse(line));
            return list;
        }

        static string Field(JsonObject a, string key) =>
            !a.ContainsKey(key) ? "(absent)" : (object)a[key] == null ? "null" : a[key].ToString();

        static byte[] Lines(IEnumerable<string> lines)
        {
            var b = new StringBuilder();
            foreach (string l in lines)
                b.Append(l).Append('\n');
            return Encoding.UTF8.GetBytes(b.ToString());
        }

        [Test]
        public void MalformedRequestsAnsweredAsLibnnnDoes()
        {
            string dir = Tree.TempDir();
            string f = Path.Combine(dir, "m.nnn").Replace("\\", "/");
            string shape = "{\"id\": 30, \"op\": \"validate\", \"file\": \"" + f + "\", \"input_shape\": ";
            var lines = new List<string>
            {
                "not json", "[1, 2]", "\"a string\"", "42", "{}", "{\"op\": \"hello\"}", "{\"id\": \"1\", \"op\": \"hello\"}",
                "{\"id\": 1.5, \"op\": \"hello\"}", "{\"id\": null, \"op\": \"hello\"}", "{\"id\": 2}", "{\"id\": 3, \"op\": 5}",
                "{\"id\": 4, \"op\": \"frob\"}", "{\"id\": 5, \"op\": \"decode\"}", "{\"id\": 6, \"op\": \"decode\", \"file\": 7}",
                "{\"id\": 7, \"op\": \"decode\", \"file\": \"\"}", "{\"id\": 8, \"op\": \"decode\", \"file\": \"-\"}",
                "{\"id\": 9, \"op\": \"decode\", \"file\": null}", "{\"id\": 10, \"op\": \"validate\"}",
                "{\"id\": 11, \"op\": \"encode\", \"file\": \"" + f + "\"}",
                "{\"id\": 12, \"op\": \"encode\", \"file\": \"" + f + "\", \"output\": \"-\"}",
                "{\"id\": 13, \"op\": \"run\", \"file\": \"" + f + "\"}",
                "{\"id\": 14, \"op\": \"run\", \"file\": \"" + f + "\", \"input\": \"/x.npy\"}",
                "{\"id\": 15, \"op\": \"run\", \"input\": \"/x.npy\", \"output\": \"/y.npy\"}",
                "{\"id\": 16, \"op\": \"hello\", \"protocol\": 2}", "{\"id\": 17, \"op\": \"hello\", \"protocol\": \"1\"}",
                "{\"id\": 18, \"op\": \"hello\", \"id\": 19}", "{\"id\": 20, \"op\": \"hello\"} trailing",
                "{\"id\": 21, \"op\": \"hello\"", "{\"id\": 22, \"op\": \"decode\", \"file\": \"\\ud800\"}",
                "{\"id\": 99999999999999999999, \"op\": \"hello\"}", "", "   ", "\t",
                shape + "[0]}", shape + "[]}", shape + "\"1,2\"}", shape + "[1.5]}", shape + "[1, -2]}",
                shape + "[2147483648]}", shape + "[" + string.Join(", ", new string('1', 33).ToCharArray()) + "]}",
                shape + "{}}", shape + "true}",
            };
            byte[] input = Lines(lines);
            // A line that is not UTF-8, between two requests.
            var withBad = new List<byte>(input);
            withBad.AddRange(new byte[] { 0xff, 0xfe, (byte)'{', (byte)'}', (byte)'\n' });
            withBad.AddRange(Lines(new[] { "{\"id\": 40}" }));
            input = withBad.ToArray();

            List<JsonObject> want = Answers(false, input), got = Answers(true, input);
            Assert.AreEqual(want.Count, got.Count, "answers: nnnkit gave " + want.Count + ", nnn-cs " + got.Count);
            for (int i = 0; i < want.Count; i++)
            {
                string what = "answer " + (i + 1) + ": nnnkit " + want[i].ToString() + "\n  nnn-cs " + got[i].ToString();
                foreach (string key in new[] { "id", "ok", "code", "path", "offset", "unsupported" })
                    Assert.AreEqual(Field(want[i], key), Field(got[i], key), key + " differs; " + what);
                Assert.IsNotNullOrEmpty((string)got[i]["message"], "no message; " + what);
                Assert.AreEqual("E_USAGE", (string)got[i]["code"], "not a usage answer: " + what);
            }
            Directory.Delete(dir, true);
        }

        [Test]
        public void HelloNamesTheProtocolAndOps()
        {
            List<JsonObject> got = Answers(true, Lines(new[] { "{\"id\": 1, \"op\": \"hello\", \"protocol\": 1}",
                "{\"id\": 2, \"op\": \"hello\"}" }));
            Assert.AreEqual(2, got.Count);
            foreach (JsonObject a in got)
            {
                Assert.IsTrue((bool)a["ok"], a.ToString());
                Assert.AreEqual(1, (int)a["protocol"], a.ToString());
                Assert.AreEqual("nnnkit-cs", (string)a["name"], a.ToString());
                var ops = new List<string>();
                foreach (JsonValue op in (JsonArray)a["ops"])
                    ops.Add((string)op);
                CollectionAssert.IsSubsetOf(new[] { "decode", "validate", "encode" }, ops, a.ToString());
                CollectionAssert.IsSubsetOf(ops, new[] { "decode", "validate", "encode", "run" }, a.ToString());
            }
            Assert.AreEqual(1, (int)got[0]["id"]);
            Assert.AreEqual(2, (int)got[1]["id"]);
        }

        /// <summary>A refused file is answered with its problem, as nnnkit testee answers it.</summary>
        [Test]
        public void RefusedFileAnsweredAsLibnnnDoes()
        {
            string file = Tree.CaseFile(Tree.Case("structural"));
            byte[] input = Lines(new[] { "{\"id\": 1, \"op\": \"decode\", \"file\": \"" + file + "\"}",
                "{\"id\": 2, \"op\": \"validate\", \"file\": \"" + file + "\"}" });
            List<JsonObject> want = Answers(false, input), got = Answers(true, input);
            Assert.AreEqual(want.Count, got.Count);
            for (int i = 0; i < want.Count; i++)
                foreach (string key in new[] { "id", "ok", "code", "path", "offset", "message" })
                    Assert.AreEqual(Field(want[i], key), Field(got[i], key), key + ": nnnkit " + want[i].ToString() + "\n  nnn-cs " + got[i].ToString());
        }
    }
}
