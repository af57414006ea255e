// ToolTests.cs: nnn-cs.exe as a user runs it: its usage errors and exit
// statuses (0 valid, 1 invalid, 2 usage or I/O, as nnnkit's), a problem
// printed as `FILE: path @0xOFFSET: message` at libnnn's path and offset,
// and its round trip (the corpus's bytes are the truth).
using System.IO;
using System.Json;
using NUnit.Framework;

namespace Nnn.Tests
{
    [TestFixture]
    public sealed class ToolTests
    {
        static void Usage(string args, string says)
        {
            Ran r = Tree.Tool_(args);
            Assert.AreEqual(2, r.Exit, "nnn-cs " + args + ": " + r);
            Assert.AreEqual("", r.Out, "nnn-cs " + args + " wrote to stdout: " + r);
            StringAssert.StartsWith("nnn-cs: ", r.Err, r.ToString());
            StringAssert.Contains(says, r.Err, r.ToString());
            StringAssert.Contains("--help", r.Err, "a usage error points at --help: " + r);
        }

        [Test]
        public void UsageErrorsExitTwoAndSayWhat()
        {
            string valid = Tree.CaseFile(Tree.Case("valid"));
            Usage("", "no command");
            Usage("frobnicate " + Tree.Quote(valid), "unknown command 'frobnicate'");
            Usage("decode", "no FILE");
            Usage("validate", "no FILE");
            Usage("roundtrip", "no FILE");
            Usage("decode " + Tree.Quote(valid) + " " + Tree.Quote(valid), "too many arguments");
            Usage("roundtrip a.nnn b.nnn c.nnn", "too many arguments");
            Usage("decode --frob " + Tree.Quote(valid), "unknown option '--frob'");
            Usage("decode -", "'-'");
            Usage("validate --input-shape", "--input-shape needs");
            foreach (string bad in new[] { "0", "1,,2", "1,", ",1", "1,x", "-1", "1.5", "2147483648", "1, 2" })
                Usage("validate --input-shape " + Tree.Quote(bad) + " " + Tree.Quote(valid), "--input-shape needs");
            Usage("testee extra", "testee: unexpected argument");
        }

        [Test]
        public void HelpExitsZeroOnStdout()
        {
            foreach (string args in new[] { "--help", "-h", "validate --help" })
            {
                Ran r = Tree.Tool_(args);
                Assert.AreEqual(0, r.Exit, r.ToString());
                StringAssert.StartsWith("usage: mono nnn-cs.exe", r.Out, r.ToString());
                Assert.AreEqual("", r.Err, r.ToString());
                foreach (string cmd in new[] { "decode", "validate", "roundtrip", "testee", "Exit status" })
                    StringAssert.Contains(cmd, r.Out, "the help names " + cmd);
            }
        }

        [Test]
        public void MissingFileIsAnIoErrorExitTwo()
        {
            string dir = Tree.TempDir();
            string missing = Path.Combine(dir, "missing.nnn");
            foreach (string cmd in new[] { "decode", "validate", "roundtrip" })
            {
                Ran r = Tree.Tool_(cmd + " " + Tree.Quote(missing));
                Assert.AreEqual(2, r.Exit, cmd + ": " + r);
                StringAssert.StartsWith(missing + ": ", r.Err, r.ToString());
            }
            Directory.Delete(dir, true);
        }

        [Test]
        public void ValidCaseDecodesValidatesAndRoundTrips()
        {
            JsonObject c = Tree.Case("valid");
            string file = Tree.CaseFile(c);
            var dims = new System.Collections.Generic.List<string>();
            foreach (JsonValue d in (JsonArray)c["input_shape"])
                dims.Add(((long)d).ToString());
            string shape = string.Join(",", dims);
            foreach (string args in new[] { "decode", "validate", "validate --input-shape " + shape, "roundtrip" })
            {
                Ran r = Tree.Tool_(args + " " + Tree.Quote(file));
                Assert.AreEqual(0, r.Exit, args + ": " + r);
                Assert.AreEqual("", r.Err, args + ": " + r);
                StringAssert.StartsWith(file + ": ", r.Out, args + ": " + r);
            }
            string dir = Tree.TempDir();
            string output = Path.Combine(dir, "out.nnn");
            Ran w = Tree.Tool_("roundtrip " + Tree.Quote(file) + " " + Tree.Quote(output));
            Assert.AreEqual(0, w.Exit, w.ToString());
            CollectionAssert.AreEqual(File.ReadAllBytes(file), File.ReadAllBytes(output), "roundtrip OUT wrote other bytes");
            Assert.AreEqual(new[] { output }, Directory.GetFiles(dir), "the atomic write left a file behind");
            Directory.Delete(dir, true);
        }

        /// <summary>A structural case: exit 1, and the manifest's path and offset (libnnn's) printed.</summary>
        [Test]
        public void InvalidCaseExitsOneWithLibnnnsPathAndOffset()
        {
            JsonObject c = Tree.Case("structural");
            string file = Tree.CaseFile(c);
            string at = (string)c["path"] + " @0x" + ((long)c["offset"]).ToString("x") + ": ";
            foreach (string cmd in new[] { "decode", "validate", "roundtrip" })
            {
                Ran r = Tree.Tool_(cmd + " " + Tree.Quote(file));
                Assert.AreEqual(1, r.Exit, cmd + ": " + r);
                Assert.AreEqual("", r.Out, cmd + ": " + r);
                StringAssert.StartsWith(file + ": " + at, r.Err, cmd + ": " + r);
            }
        }
    }
}
