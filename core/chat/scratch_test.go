package chat
import ("testing")
func TestScratch(t *testing.T){
 for _, s := range []string{"{{ [1,2][0:9999999999999999:2] }}", "{{ [1,2][0:99999999999:2] }}", "{{ 'ab'[0:9999999999999:2] }}", "{{ ([1]|batch(100000000000))|length }}", "{{ 'x'|center(10000000000) }}", "{{ 'x'|indent(10000000000) }}", "{{ 'x' ~ 'y' }}"} {
 tm,err:=NewTemplate(s,"",""); if err!=nil {t.Log("compile",err); continue}
 out,err:=tm.Render(nil,false)
 if len(out)>50 {out=out[:50]}
 t.Logf("%s => %q %v", s, out, err)
 }
}
